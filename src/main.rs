use clap::Parser;

fn main() -> color_eyre::Result<()> {
    color_eyre::install()?;
    let cli = somnus::cli::Cli::parse();
    let code = somnus::cli::run(cli)?;
    std::process::exit(code);
}
