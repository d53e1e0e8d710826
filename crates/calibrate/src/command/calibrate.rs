//! The `calibrate` command: ladders of outstanding reads over the targets, written as a result directory.
