//! Periodic paths: the search on the slow calls alone (`search`), the part of a long run it reads
//! (`search_part`), its permutation null (`permutation`: the whole search rerun on the same calls
//! at random positions, each lattice's p-value), periods that are not whole numbers
//! (`fractional`), the null of a lattice that lies on a claimed path's own lattice or on one its
//! other calls gather on (`sub_period`), and the lattices a path drags after it on its own
//! period, said with it (`aftermath`). A slower stretch locked to a path's phase is `analysis::stretch`: the
//! code paths and the dated rows hold its profile, and it needs nothing of the search.
pub mod aftermath;
pub mod fractional;
pub mod permutation;
pub mod search;
pub mod search_part;
pub mod sub_period;
