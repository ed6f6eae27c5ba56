//! Controllers the embedder supplies: a registry of names, each with a
//! factory of `Box<dyn CongestionControl>`, that a scenario's `cc` (or
//! `plt.hcm`) may name next to the catalogue's. The Python front end
//! registers controllers written in Python through it, the Gymnasium
//! environment one whose window an agent sets. It costs a built-in run
//! nothing: the factory is called once per flow when the run is built,
//! and the transport holds the controller as `Box<dyn CongestionControl>`,
//! as it holds a built-in one.

use std::fmt;
use std::sync::Arc;

use longfat_cc::{CcError, CcParams, CongestionControl, InitialWindow, Rules};

use super::error::{err, ScenarioError};

/// What a factory is asked to build.
#[derive(Clone, Copy, Debug)]
pub struct ControllerRequest<'a> {
    /// The entry's `params`, as written (the factory checks them: an
    /// unknown name or a bad value is a [`CcError`] whose field is
    /// `params.<name>`, as for a built-in controller).
    pub params: &'a CcParams,
    /// The flow's transport profile, as the controller sees it.
    pub rules: Rules,
    pub init: InitialWindow,
    /// The flow the controller will drive: its index among the run's flows
    /// (the order of the results' `flows` table). None for the one check
    /// made per scenario entry while the scenario is validated, whose
    /// controller is dropped unused.
    pub flow: Option<usize>,
}

/// Builds one controller for a request.
pub type ControllerFactory = Arc<
    dyn Fn(&ControllerRequest<'_>) -> Result<Box<dyn CongestionControl>, CcError> + Send + Sync,
>;

/// Controllers the embedder supplies, by name, in the order registered.
#[derive(Clone, Default)]
pub struct ExternalControllers {
    entries: Vec<(String, ControllerFactory)>,
}

/// The longest name a registered controller may have.
pub const MAX_EXTERNAL_NAME_LEN: usize = 40;

impl ExternalControllers {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `name`. Refused: a name of the catalogue (`reno`, ...,
    /// `plt`), one already registered, and one that is not 1 to 40 ASCII
    /// letters, digits, `_` or `-` starting with a letter (the name labels
    /// results, so it must not be mistaken for a built-in one). The error's
    /// field is `name`.
    pub fn register(
        &mut self,
        name: &str,
        factory: ControllerFactory,
    ) -> Result<(), ScenarioError> {
        let well_formed = name.len() <= MAX_EXTERNAL_NAME_LEN
            && name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !well_formed {
            return err(
                "name",
                format!("{name:?} is not a controller name; allowed: 1 to {MAX_EXTERNAL_NAME_LEN} ASCII letters, digits, '_' or '-', starting with a letter"),
            );
        }
        if longfat_cc::NAMES.contains(&name) {
            return err(
                "name",
                format!(
                    "{name:?} is a built-in algorithm; a registered controller may not shadow one (built-in: {})",
                    longfat_cc::NAMES.join(", ")
                ),
            );
        }
        if self.get(name).is_some() {
            return err(
                "name",
                format!("{name:?} is already registered; unregister it first"),
            );
        }
        self.entries.push((name.to_string(), factory));
        Ok(())
    }

    /// Removes `name`; whether it was registered.
    pub fn unregister(&mut self, name: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|(n, _)| n != name);
        self.entries.len() != before
    }

    /// The factory registered as `name`.
    pub fn get(&self, name: &str) -> Option<&ControllerFactory> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }

    /// The registered names, in the order registered.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The names a scenario's `cc` accepts, for an error message: the
    /// built-in controllers, then the registered ones.
    pub(super) fn known(&self) -> String {
        let builtin = longfat_cc::ALGORITHMS.join(", ");
        if self.is_empty() {
            builtin
        } else {
            format!(
                "{builtin}; registered: {}",
                self.names().collect::<Vec<_>>().join(", ")
            )
        }
    }
}

impl fmt::Debug for ExternalControllers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// One entry's controller: a catalogue name, or a registered factory.
#[derive(Clone)]
pub(super) enum ControllerSource {
    Builtin,
    External(ControllerFactory),
}

impl fmt::Debug for ControllerSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Builtin => "Builtin",
            Self::External(_) => "External",
        })
    }
}
