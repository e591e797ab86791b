//! The `sonde` binary. All of it lives in `sonde-cli`; see that crate's docs for why.

fn main() {
    sonde_cli::main()
}
