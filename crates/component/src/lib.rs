//! WIT component shell (to be written).
