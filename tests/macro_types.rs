//! `channel!` expands to the const-generic constructor: for every flavour,
//! the macro and the constructor give values of one and the same type.
//!
//! The checks are made by the type checker: each test compiles only if the
//! types agree. At run time they just confirm the capacity.

/// Compiles only when both arguments have the same type (no coercion
/// applies between two distinct channel types).
fn same<T>(_: &T, _: &T) {}

macro_rules! same_types {
    ($($topology:ident),* $(,)?) => {$(
        mod $topology {
            use asyncband::{channel, $topology};

            use super::same;

            #[test]
            fn bounded_has_the_type_of_the_const_generic_constructor() {
                let from_macro = channel!($topology, bounded = 64, u32);
                same(&from_macro, &$topology::Bounded::<u32, 64>::channel());
                same(&from_macro, &$topology::bounded::<u32, 64>());
                let (tx, _rx): (
                    $topology::Sender<$topology::Bounded<u32, 64>>,
                    $topology::Receiver<$topology::Bounded<u32, 64>>,
                ) = from_macro;
                assert_eq!(tx.capacity(), Some(64));
            }

            #[test]
            fn unbounded_has_the_type_of_the_const_generic_constructor() {
                let from_macro = channel!($topology, unbounded, String);
                same(&from_macro, &$topology::Unbounded::<String>::channel());
                same(&from_macro, &$topology::unbounded::<String>());
                let (tx, _rx): (
                    $topology::Sender<$topology::Unbounded<String>>,
                    $topology::Receiver<$topology::Unbounded<String>>,
                ) = from_macro;
                assert_eq!(tx.capacity(), None);
            }

            #[test]
            fn inline_sets_the_inline_parameter() {
                let bounded = channel!($topology, bounded = 8, [u8; 16], inline = 16);
                same(&bounded, &$topology::Bounded::<[u8; 16], 8, 16>::channel());
                let unbounded = channel!($topology, unbounded, u64, inline = 8);
                same(&unbounded, &$topology::Unbounded::<u64, 8>::channel());
            }

            #[test]
            fn const_capacities_give_the_same_type_as_literals() {
                const CAP: usize = 16;
                let from_path = channel!($topology, bounded = CAP, u8);
                let from_expression = channel!($topology, bounded = 4 * 4, u8);
                same(&from_path, &from_expression);
                same(&from_path, &$topology::Bounded::<u8, 16>::channel());
            }

            #[test]
            fn the_largest_capacity_is_accepted() {
                let (tx, _rx) = channel!($topology, bounded = 1048576, ());
                assert_eq!(tx.capacity(), Some(1 << 20));
            }
        }
    )*};
}

same_types!(spsc, mpsc, mpmc);
