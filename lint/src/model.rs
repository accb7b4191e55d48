//! The typed plugin model: agents, flows and routines as views over the YAML tree. Every field
//! is the node that wrote it, so every finding has the exact span of a key or value. Values of
//! the wrong shape are left out here (the schema rules report them) so that other rules never
//! see them.

use std::collections::HashMap;

use crate::yaml::Node;

/// The kinds of plugin file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// `agents/<name>.yaml`.
    Agent,
    /// `flows/<name>.yaml`.
    Flow,
    /// `routines/<name>.yaml`.
    Routine,
}

impl FileKind {
    /// `agent`, `flow` or `routine`.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Agent => "agent",
            FileKind::Flow => "flow",
            FileKind::Routine => "routine",
        }
    }

    /// Parses `agent`, `flow` or `routine`.
    pub fn from_name(name: &str) -> Option<FileKind> {
        match name {
            "agent" => Some(FileKind::Agent),
            "flow" => Some(FileKind::Flow),
            "routine" => Some(FileKind::Routine),
            _ => None,
        }
    }

    /// The kind a path's folder says (`agents/`, `flows/`, `routines/`), if any.
    pub fn from_path(path: &str) -> Option<FileKind> {
        let mut dirs = path.rsplit(['/', '\\']).skip(1);
        match dirs.next()? {
            "agents" => Some(FileKind::Agent),
            "flows" => Some(FileKind::Flow),
            "routines" => Some(FileKind::Routine),
            _ => None,
        }
    }

    /// The kind a file's keys say: a routine has `triggers` or `agent`, a flow `steps` or
    /// `trigger`, an agent `runtime`, `model` or `instructions`.
    pub fn from_content(root: &Node) -> Option<FileKind> {
        let has = |k: &str| root.entry(k).is_some();
        if has("triggers") || has("agent") || has("owner_team") {
            Some(FileKind::Routine)
        } else if has("steps") || has("trigger") {
            Some(FileKind::Flow)
        } else if has("runtime") || has("model") || has("instructions") {
            Some(FileKind::Agent)
        } else {
            None
        }
    }
}

/// A scalar node that is a string-like value.
fn scalar(node: Option<&Node>) -> Option<&Node> {
    node.filter(|n| n.scalar().is_some() && !n.is_null())
}

fn list(node: Option<&Node>) -> Vec<&Node> {
    node.and_then(Node::items)
        .map(|items| items.iter().filter(|n| n.scalar().is_some()).collect())
        .unwrap_or_default()
}

fn maps(node: Option<&Node>) -> Vec<&Node> {
    node.and_then(Node::items)
        .map(|items| items.iter().filter(|n| n.entries().is_some()).collect())
        .unwrap_or_default()
}

fn map(node: Option<&Node>) -> Option<&Node> {
    node.filter(|n| n.entries().is_some())
}

/// An agent file.
#[derive(Debug)]
pub struct Agent<'a> {
    /// `name`.
    pub name: Option<&'a Node>,
    /// `runtime`.
    pub runtime: Option<&'a Node>,
    /// `tools[]`.
    pub tools: Vec<&'a Node>,
    /// `delegates[]`.
    pub delegates: Vec<&'a Node>,
    /// `instructions`.
    pub instructions: Option<&'a Node>,
    /// `limits.timeout`.
    pub timeout: Option<&'a Node>,
}

/// The event part of a trigger, or a `wait_for_event` step: the same fields (E7, E8).
#[derive(Debug)]
pub struct EventSpec<'a> {
    /// The mapping itself.
    pub node: &'a Node,
    /// `source`.
    pub source: Option<&'a Node>,
    /// `types` (any shape; the schema checks it).
    pub types: Option<&'a Node>,
    /// `subject` (waits only).
    pub subject: Option<&'a Node>,
    /// `filter`.
    pub filter: Option<&'a Node>,
    /// `timeout` (waits only).
    pub timeout: Option<&'a Node>,
    /// `since` (waits only).
    pub since: Option<&'a Node>,
    /// `sender` (routine triggers only).
    pub sender: Option<&'a Node>,
    /// The `allow_senders` entry, key and value (routine triggers only).
    pub allow_senders: Option<&'a crate::yaml::Entry>,
}

impl<'a> EventSpec<'a> {
    fn new(node: &'a Node) -> Self {
        Self {
            node,
            source: scalar(node.get("source")),
            types: node.get("types"),
            subject: scalar(node.get("subject")),
            filter: scalar(node.get("filter")),
            timeout: scalar(node.get("timeout")),
            since: scalar(node.get("since")),
            sender: scalar(node.get("sender")),
            allow_senders: node.entry("allow_senders"),
        }
    }

    /// The source's name, when written as text.
    pub fn source_name(&self) -> Option<&'a str> {
        self.source.and_then(Node::text)
    }
}

/// A flow step.
#[derive(Debug)]
pub struct Step<'a> {
    /// The step mapping.
    pub node: &'a Node,
    /// `id`.
    pub id: Option<&'a Node>,
    /// `when`.
    pub when: Option<&'a Node>,
    /// `wait_for_event`.
    pub wait: Option<EventSpec<'a>>,
    /// `approval.details`.
    pub details: Option<&'a Node>,
    /// The action keys present (`wait_for_event`, `approval`).
    pub actions: Vec<&'a Node>,
}

/// A flow file.
#[derive(Debug)]
pub struct Flow<'a> {
    /// `name`.
    pub name: Option<&'a Node>,
    /// `trigger.event`.
    pub trigger_event: Option<EventSpec<'a>>,
    /// `steps[]`.
    pub steps: Vec<Step<'a>>,
    /// The index of the first step with each id (rules look steps up by id, and a flow may
    /// have thousands of steps).
    pub step_index: HashMap<&'a str, usize>,
}

impl<'a> Flow<'a> {
    fn new(
        name: Option<&'a Node>,
        trigger_event: Option<EventSpec<'a>>,
        steps: Vec<Step<'a>>,
    ) -> Self {
        let mut step_index = HashMap::with_capacity(steps.len());
        for (i, step) in steps.iter().enumerate() {
            if let Some(id) = step.id.and_then(Node::text) {
                step_index.entry(id).or_insert(i);
            }
        }
        Self {
            name,
            trigger_event,
            steps,
            step_index,
        }
    }

    /// The index of the first step with this id.
    pub fn step(&self, id: &str) -> Option<usize> {
        self.step_index.get(id).copied()
    }
}

/// A routine trigger.
#[derive(Debug)]
pub struct Trigger<'a> {
    /// The trigger mapping.
    pub node: &'a Node,
    /// `name`.
    pub name: Option<&'a Node>,
    /// `event`.
    pub event: Option<EventSpec<'a>>,
}

/// A routine file.
#[derive(Debug)]
pub struct Routine<'a> {
    /// `name`.
    pub name: Option<&'a Node>,
    /// `agent`.
    pub agent: Option<&'a Node>,
    /// `tools[]`.
    pub tools: Vec<&'a Node>,
    /// The `tools` key, when present.
    pub tools_key: Option<&'a Node>,
    /// `triggers[]`.
    pub triggers: Vec<Trigger<'a>>,
    /// `outputs[].name`.
    pub output_names: Vec<&'a Node>,
}

/// A file's model.
#[derive(Debug)]
pub enum Model<'a> {
    /// An agent.
    Agent(Agent<'a>),
    /// A flow.
    Flow(Flow<'a>),
    /// A routine.
    Routine(Routine<'a>),
    /// A file whose kind is unknown or whose root is not a mapping.
    None,
}

/// The action keys a flow step may have.
pub const STEP_ACTIONS: &[&str] = &["wait_for_event", "approval"];

impl<'a> Model<'a> {
    /// Builds the model of a file.
    pub fn build(root: Option<&'a Node>, kind: Option<FileKind>) -> Model<'a> {
        let (Some(root), Some(kind)) = (root.filter(|r| r.entries().is_some()), kind) else {
            return Model::None;
        };
        match kind {
            FileKind::Agent => {
                let limits = map(root.get("limits"));
                Model::Agent(Agent {
                    name: scalar(root.get("name")),
                    runtime: scalar(root.get("runtime")),
                    tools: list(root.get("tools")),
                    delegates: list(root.get("delegates")),
                    instructions: scalar(root.get("instructions")),
                    timeout: scalar(limits.and_then(|l| l.get("timeout"))),
                })
            }
            FileKind::Flow => Model::Flow(Flow::new(
                scalar(root.get("name")),
                map(map(root.get("trigger")).and_then(|t| t.get("event"))).map(EventSpec::new),
                maps(root.get("steps"))
                    .into_iter()
                    .map(|node| Step {
                        node,
                        id: scalar(node.get("id")),
                        when: scalar(node.get("when")),
                        wait: map(node.get("wait_for_event")).map(EventSpec::new),
                        details: scalar(map(node.get("approval")).and_then(|a| a.get("details"))),
                        actions: node
                            .entries()
                            .unwrap_or_default()
                            .iter()
                            .filter(|e| e.key.text().is_some_and(|k| STEP_ACTIONS.contains(&k)))
                            .map(|e| &e.key)
                            .collect(),
                    })
                    .collect(),
            )),
            FileKind::Routine => Model::Routine(Routine {
                name: scalar(root.get("name")),
                agent: scalar(root.get("agent")),
                tools: list(root.get("tools")),
                tools_key: root.entry("tools").map(|e| &e.key),
                triggers: maps(root.get("triggers"))
                    .into_iter()
                    .map(|node| Trigger {
                        node,
                        name: scalar(node.get("name")),
                        event: map(node.get("event")).map(EventSpec::new),
                    })
                    .collect(),
                output_names: maps(root.get("outputs"))
                    .into_iter()
                    .filter_map(|o| scalar(o.get("name")))
                    .collect(),
            }),
        }
    }
}

/// What the cross-file rules need to know about an agent of the plugin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentInfo {
    /// Its runtime.
    pub runtime: Option<String>,
    /// Its tools.
    pub tools: Vec<String>,
    /// Its delegates.
    pub delegates: Vec<String>,
}

/// The agents of the plugin, by name, for cross-file rules. `complete` is false when no agent
/// folder was seen, so that "agent does not exist" is only said when it can be known.
#[derive(Clone, Debug, Default)]
pub struct PluginIndex {
    /// Agents by name.
    pub agents: HashMap<String, AgentInfo>,
    /// Whether the plugin's agents are all known.
    pub complete: bool,
}

impl PluginIndex {
    /// Records an agent file.
    pub fn add_agent(&mut self, agent: &Agent<'_>, stem: &str) {
        let name = agent.name.and_then(Node::text).unwrap_or(stem).to_owned();
        let texts = |nodes: &[&Node]| {
            nodes
                .iter()
                .filter_map(|n| n.text())
                .map(str::to_owned)
                .collect()
        };
        self.agents.insert(
            name,
            AgentInfo {
                runtime: agent.runtime.and_then(Node::text).map(str::to_owned),
                tools: texts(&agent.tools),
                delegates: texts(&agent.delegates),
            },
        );
    }
}
