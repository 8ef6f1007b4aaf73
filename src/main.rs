//! `fiox`: the binary is thin glue over the library crates.

fn main() {
    println!("fiox {}", env!("CARGO_PKG_VERSION"));
}
