//! Periodic paths: the search on the slow calls alone (`search`), its permutation null (`permutation`:
//! the whole search rerun on the same calls at random positions, each lattice's p-value), periods
//! that are not whole numbers (`fractional`), a slower stretch locked to a path's phase (`stretch`), and
//! the null of a lattice that lies on a claimed path's own lattice (`sub_period`).
pub mod fractional;
pub mod permutation;
pub mod search;
pub mod stretch;
pub mod sub_period;
