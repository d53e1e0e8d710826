//! The SLOB schema in SQLite, read through the direct-I/O VFS: one row per
//! page, index range plans, and page reads that really reach the device.

use iolens_db_sqlite::slob::{self, Statements};
use iolens_db_sqlite::vfs;
use iolens_probe::{device_of_path, DiskStats};

#[test]
fn slob_schema_reads_reach_the_device() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let scale = 3000;
    slob::load_schema(dir.path(), 1, scale, 100, 42, |_| {}, || false).unwrap();
    assert_eq!(slob::recorded_scale(dir.path(), 1), Some(scale));

    let l = slob::layout(dir.path(), 1).unwrap();
    assert_eq!(l.rows, scale);
    assert!((l.rows_per_page - 1.0).abs() < 0.01, "{l:?}");
    assert!(
        l.key_order_correlation.abs() < 0.1,
        "keys are not in random order: {l:?}"
    );
    assert!(l.index_pages > 0);

    let c = slob::open(&slob::schema_path(dir.path(), 1), 10 * 8192, false).unwrap();
    assert_eq!(vfs::vfs_name(&c).as_deref(), Some(vfs::VFS_NAME));
    let plan: String = c
        .query_row(
            &format!("EXPLAIN QUERY PLAN {}", Statements::SELECT),
            [1, 64],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("USING INDEX cf_key"), "{plan}");

    let dev = device_of_path(dir.path());
    let before = DiskStats::read().unwrap();
    let (r0, _, _) = vfs::totals();
    let mut st = c.prepare(Statements::SELECT).unwrap();
    let mut rows = 0u64;
    for i in 0..40u64 {
        let lo = 1 + (i * 613) % (scale - 64);
        rows += st.query_row([lo, lo + 63], |r| r.get::<_, u64>(0)).unwrap();
    }
    assert_eq!(rows, 40 * 64);
    let (r1, _, _) = vfs::totals();
    let reads = r1 - r0;
    assert!(
        reads >= 40 * 64,
        "{reads} page reads for {rows} rows through a tiny cache"
    );
    let h = vfs::take_thread_reads();
    assert!(h.count() >= reads / 2, "per-thread latencies recorded");
    if let Some(dev) = dev {
        let after = DiskStats::read().unwrap();
        let d = after.delta(&before, &dev.name).unwrap();
        assert!(
            d.read_ios as f64 >= reads as f64 * 0.9,
            "device saw {} reads for {reads} page reads",
            d.read_ios
        );
    } else {
        eprintln!("device check skipped: no block device under the scratch directory");
    }
}

#[test]
fn updates_commit_and_are_read_back() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    slob::load_schema(dir.path(), 1, 500, 10, 7, |_| {}, || false).unwrap();
    let c = slob::open(&slob::schema_path(dir.path(), 1), 10 * 8192, false).unwrap();
    let n = c
        .execute(Statements::UPDATE_LITE, rusqlite::params![10, 17, "x"])
        .unwrap();
    assert_eq!(n, 8);
    let n = c
        .execute(&Statements::update_heavy(), rusqlite::params![20, 21, "y"])
        .unwrap();
    assert_eq!(n, 2);
    drop(c);
    let c = slob::open(&slob::schema_path(dir.path(), 1), 10 * 8192, false).unwrap();
    let x: u64 = c
        .query_row("SELECT count(*) FROM cf WHERE c1='x'", [], |r| r.get(0))
        .unwrap();
    let y: u64 = c
        .query_row("SELECT count(*) FROM cf WHERE c8='y'", [], |r| r.get(0))
        .unwrap();
    assert_eq!((x, y), (8, 2));
    let scanned: u64 = c.query_row(Statements::SCAN, [], |r| r.get(0)).unwrap();
    assert_eq!(scanned, 0);
}
