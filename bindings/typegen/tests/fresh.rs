//! The committed declarations are what the generator writes from the schemas now: a
//! schema edited without regenerating (or a generated file edited by hand) fails here.

use std::path::Path;

#[test]
fn the_committed_declarations_are_generated_from_the_schemas() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let stale = little_typegen::stale(&root).expect("the schemas generate");
    assert!(
        stale.is_empty(),
        "stale generated declarations: {}\nregenerate them with `{}` and commit the result",
        stale.join(", "),
        little_typegen::COMMAND
    );
}
