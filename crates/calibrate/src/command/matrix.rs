//! The `matrix` command: ORION's matrix over the targets, written as a result directory.
