//! Helpers shared by the unit tests of the calibration modules.

/// `base` changed by `edit` is refused by `check`, with a message that
/// names `fix` (the flag or the value to type instead).
pub fn assert_refused<T, U>(
    mut base: T,
    edit: impl FnOnce(&mut T),
    check: impl FnOnce(&T) -> Result<U, String>,
    fix: &str,
) {
    edit(&mut base);
    match check(&base) {
        Ok(_) => panic!("accepted; expected an error that names {fix}"),
        Err(msg) => assert!(msg.contains(fix), "{msg}"),
    }
}
