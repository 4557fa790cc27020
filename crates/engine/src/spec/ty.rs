//! The type language of arguments and config keys.

use serde_json::Value;

/// The accepted shape of one value.
#[derive(Debug, Clone)]
pub enum Ty {
    /// `true`/`false`, or the strings `"true" "1" "false" "0"`.
    Bool,
    /// A finite integer in `[min, max]`; numeric strings and whole floats accepted.
    Int { min: i64, max: i64 },
    /// A finite number in `[min, max]`; numeric strings accepted.
    Num { min: f64, max: f64 },
    /// The word `"auto"` (the server chooses) or an integer as [`Ty::Int`], for a
    /// setting whose best value depends on the desktop.
    AutoOrInt { min: i64, max: i64 },
    /// A string of at most `max_chars` Unicode scalar values.
    Str {
        max_chars: Option<usize>,
        non_empty: bool,
    },
    /// One of the listed strings (exact).
    Enum(Vec<&'static str>),
    /// A closed object: unknown keys are refused.
    Object(Vec<Field>),
    /// A list of items.
    List {
        item: Box<Ty>,
        min: usize,
        max: Option<usize>,
    },
    /// A key name of the vocabulary (PROTOCOL §4).
    KeyName,
    /// A combo: a list of key names or a `"ctrl+shift+esc"` string; no duplicates.
    KeyCombo,
    /// Any JSON value (validated by the code that uses it).
    Any,
}

/// Where an absent (or `null`) value comes from.
#[derive(Debug, Clone)]
pub enum Default {
    /// No default: the field is optional and stays absent, or it is required.
    None,
    /// A fixed default.
    Value(Value),
    /// The session config at this dotted path, so config wins over tool defaults.
    Config(&'static str),
}

/// One named member of an object.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
    pub default: Default,
    pub doc: &'static str,
    /// For config keys: may `session.configure` change it.
    pub mutable: bool,
}

impl Field {
    /// An optional field without default.
    pub fn opt(name: &'static str, ty: Ty, doc: &'static str) -> Field {
        Field {
            name,
            ty,
            required: false,
            default: Default::None,
            doc,
            mutable: true,
        }
    }

    /// A required field.
    pub fn req(name: &'static str, ty: Ty, doc: &'static str) -> Field {
        Field {
            required: true,
            ..Field::opt(name, ty, doc)
        }
    }

    /// An optional field with a fixed default.
    pub fn def(name: &'static str, ty: Ty, default: Value, doc: &'static str) -> Field {
        Field {
            default: Default::Value(default),
            ..Field::opt(name, ty, doc)
        }
    }

    /// An optional field whose default is read from the session config.
    pub fn cfg(name: &'static str, ty: Ty, path: &'static str, doc: &'static str) -> Field {
        Field {
            default: Default::Config(path),
            ..Field::opt(name, ty, doc)
        }
    }

    /// Marks a config key as fixed once the session started.
    pub fn immutable(mut self) -> Field {
        self.mutable = false;
        self
    }
}

impl Ty {
    /// An integer range.
    pub fn int(min: i64, max: i64) -> Ty {
        Ty::Int { min, max }
    }

    /// A number range.
    pub fn num(min: f64, max: f64) -> Ty {
        Ty::Num { min, max }
    }

    /// Any string.
    pub fn string() -> Ty {
        Ty::Str {
            max_chars: None,
            non_empty: false,
        }
    }

    /// An enumeration.
    pub fn one_of(values: &[&'static str]) -> Ty {
        Ty::Enum(values.to_vec())
    }

    /// A list.
    pub fn list(item: Ty, min: usize, max: Option<usize>) -> Ty {
        Ty::List {
            item: Box::new(item),
            min,
            max,
        }
    }

    /// An unbounded canvas coordinate: any finite number, clamped later.
    pub fn coord() -> Ty {
        Ty::num(-1.0e9, 1.0e9)
    }
}
