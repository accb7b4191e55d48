//! The `ozcheck` command line: the only place that prints or picks exit codes.

fn main() {
    println!("ozcheck");
}
