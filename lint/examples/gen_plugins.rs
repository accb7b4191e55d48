//! Writes a benchmark corpus of plugin files: `cargo run --release -p ozcheck-lint --example
//! gen_plugins -- DIR [FILES]` (default 200 files). Files are 30 to 150 lines, a third each
//! agents, flows and routines, spread over plugins of nine files, with filters, `when`s and
//! templates like the documents' examples; the same seed gives the same files.
//!
//! With `--github-workflows` as the first argument it writes GitHub workflow files of the same
//! sizes instead (`DIR/.github/workflows/*.yml`), for running actionlint side by side.

use std::fmt::Write as _;
use std::path::Path;

/// A small deterministic generator (64-bit linear congruential), so the corpus is reproducible
/// without a dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const FILTERS: &[&str] = &[
    "event.action == 'completed'",
    "event.attributes.conclusion != ''",
    "event.action == 'opened' && !event.attributes.draft",
    "event.text.contains('LGTM')",
    "event.attributes.labels.exists(l, l == 'urgent')",
    "event.subject.startsWith('octo/') && event.type == 'check_suite'",
];

fn agent(rng: &mut Lcg, name: &str, lines: usize) -> String {
    let mut out = format!(
        "name: {name}\nruntime: pydantic-ai\nmodel:\n  primary: anthropic/claude-sonnet-5-5\ninstructions: prompts/{name}.md\ntools:\n  - oz.wait_for_event\n"
    );
    let mut n = 0;
    while out.lines().count() + 2 < lines {
        let _ = writeln!(out, "  - oz.tool-{n}-{}", rng.below(1000));
        n += 1;
    }
    out.push_str("limits:\n  timeout: 26h\n");
    out
}

fn flow(rng: &mut Lcg, name: &str, lines: usize) -> String {
    let mut out = format!(
        "name: {name}\ntrigger:\n  event: {{ source: github-events, types: [pull_request], filter: \"event.action == 'opened'\" }}\nsteps:\n"
    );
    let mut i = 0;
    while out.lines().count() + 9 < lines {
        let filter = FILTERS[rng.below(FILTERS.len() as u64) as usize];
        let _ = write!(
            out,
            "  - id: wait{i}\n    wait_for_event:\n      source: github-events\n      types: [check_suite]\n      subject: ${{{{ trigger.event.subject }}}}\n      filter: {filter}\n      timeout: {}h\n",
            1 + rng.below(48)
        );
        let _ = write!(
            out,
            "  - id: tell{i}\n    when: steps.wait{i}.matched && steps.wait{i}.event.attributes.conclusion == 'failure'\n    approval: {{ details: \"CI failed on ${{{{ trigger.event.subject }}}}. Look at it?\" }}\n"
        );
        i += 1;
    }
    while out.lines().count() < lines {
        out.push_str("# notes for reviewers\n");
    }
    out
}

fn routine(rng: &mut Lcg, name: &str, agent: &str, lines: usize) -> String {
    let mut out = format!(
        "name: {name}\nagent: {agent}\ninput: Review the pull request in the trigger data.\nowner_team: dev\ntools: [oz.wait_for_event]\ntriggers:\n"
    );
    let mut i = 0;
    while out.lines().count() + 12 < lines {
        let filter = FILTERS[rng.below(FILTERS.len() as u64) as usize];
        let _ = write!(
            out,
            "  - name: trigger-{i}\n    event:\n      source: github-events\n      types: [pull_request, issue_comment]\n      filter: {filter}\n      sender: event.attributes.sender\n      allow_senders: [octocat, ada]\n"
        );
        i += 1;
    }
    out.push_str("outputs:\n  - name: draft_review\n    description: Post a draft review on the pull request\n    http: { url: \"https://hooks.example.com/reviews\", secret: REVIEWS_HOOK }\n");
    while out.lines().count() < lines {
        out.push_str("# notes for reviewers\n");
    }
    out
}

fn workflow(rng: &mut Lcg, lines: usize) -> String {
    let mut out = String::from(
        "name: ci\non:\n  pull_request:\n    branches: [main]\n  push:\n    branches: [main]\npermissions:\n  contents: read\njobs:\n",
    );
    let mut job = 0;
    while out.lines().count() + 14 < lines {
        let _ = write!(
            out,
            "  job{job}:\n    runs-on: ubuntu-latest\n    timeout-minutes: {}\n    steps:\n      - uses: actions/checkout@v4\n      - name: build\n        if: ${{{{ github.event_name == 'pull_request' && !github.event.pull_request.draft }}}}\n        run: |\n          cargo build --release\n          echo \"${{{{ github.sha }}}}\"\n      - name: test\n        if: ${{{{ success() && contains(github.ref, 'main') }}}}\n        run: cargo test\n",
            5 + rng.below(50)
        );
        job += 1;
    }
    while out.lines().count() < lines {
        out.push_str("# notes for reviewers\n");
    }
    out
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "--github-workflows") {
        args.next();
        let dir = args
            .next()
            .unwrap_or_else(|| "target/bench-workflows".to_owned());
        let files: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(200);
        let folder = Path::new(&dir).join(".github/workflows");
        std::fs::create_dir_all(&folder)?;
        let mut rng = Lcg(0x5eed);
        let mut total_lines = 0;
        for i in 0..files {
            let lines = 30 + rng.below(121) as usize;
            let text = workflow(&mut rng, lines);
            total_lines += text.lines().count();
            std::fs::write(folder.join(format!("ci-{i}.yml")), text)?;
        }
        println!("wrote {files} workflow files, {total_lines} lines, under {dir}");
        return Ok(());
    }
    let dir = args
        .next()
        .unwrap_or_else(|| "target/bench-plugins".to_owned());
    let files: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(200);
    let mut rng = Lcg(0x5eed);
    let mut total_lines = 0;
    for i in 0..files {
        let plugin = Path::new(&dir).join(format!("plugin-{:02}", i / 9));
        let lines = 30 + rng.below(121) as usize;
        let agent_name = format!("agent-{}", (i / 3) * 3);
        let (folder, name, text) = match i % 3 {
            0 => (
                "agents",
                agent_name.clone(),
                agent(&mut rng, &agent_name, lines),
            ),
            1 => {
                let name = format!("flow-{i}");
                let text = flow(&mut rng, &name, lines);
                ("flows", name, text)
            }
            _ => {
                let name = format!("routine-{i}");
                let text = routine(&mut rng, &name, &agent_name, lines);
                ("routines", name, text)
            }
        };
        if folder == "agents" {
            let prompts = plugin.join("prompts");
            std::fs::create_dir_all(&prompts)?;
            std::fs::write(
                prompts.join(format!("{name}.md")),
                "Review pull requests.\n",
            )?;
        }
        let folder = plugin.join(folder);
        std::fs::create_dir_all(&folder)?;
        total_lines += text.lines().count();
        std::fs::write(folder.join(format!("{name}.yaml")), text)?;
    }
    println!("wrote {files} files, {total_lines} lines, under {dir}");
    Ok(())
}
