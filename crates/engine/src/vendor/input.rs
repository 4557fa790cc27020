//! Reading a vendor's arguments strictly: an object with known members only, each of
//! the documented type, and every refusal naming the member (PROTOCOL §3's
//! `invalid_arguments` with `data.issues[]`).

use serde_json::{Map, Value};

/// One problem with a vendor call, at a member path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub path: String,
    pub message: String,
}

impl Refusal {
    pub fn at(path: impl Into<String>, message: impl Into<String>) -> Refusal {
        Refusal {
            path: path.into(),
            message: message.into(),
        }
    }
}

pub(crate) type Read<T> = Result<T, Refusal>;

/// A vendor object under `prefix` (`""` for the call itself, `actions[2]` for an item).
pub(crate) struct Input<'a> {
    map: &'a Map<String, Value>,
    prefix: String,
}

impl<'a> Input<'a> {
    /// `v` must be an object whose members are all in `known`.
    pub fn new(v: &'a Value, prefix: &str, known: &[&str]) -> Read<Input<'a>> {
        let Some(map) = v.as_object() else {
            return Err(Refusal::at(prefix, "must be an object"));
        };
        let input = Input {
            map,
            prefix: prefix.to_string(),
        };
        if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(Refusal::at(
                input.path(k),
                format!(
                    "unknown member (this vocabulary knows: {})",
                    known.join(", ")
                ),
            ));
        }
        Ok(input)
    }

    /// The path of a member, for refusals.
    pub fn path(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.prefix)
        }
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The raw member, if given.
    pub fn raw(&self, name: &str) -> Option<&'a Value> {
        self.get(name)
    }

    pub fn opt_str(&self, name: &str) -> Read<Option<&'a str>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(Refusal::at(self.path(name), "must be a string")),
        }
    }

    pub fn str(&self, name: &str) -> Read<&'a str> {
        self.opt_str(name)?
            .ok_or_else(|| Refusal::at(self.path(name), "is required"))
    }

    pub fn opt_num(&self, name: &str, min: f64, max: f64) -> Read<Option<f64>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let n = match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        }
        .filter(|n| n.is_finite())
        .ok_or_else(|| Refusal::at(self.path(name), "must be a number"))?;
        if n < min || n > max {
            return Err(Refusal::at(
                self.path(name),
                format!("must be between {min} and {max}"),
            ));
        }
        Ok(Some(n))
    }

    pub fn num(&self, name: &str, min: f64, max: f64) -> Read<f64> {
        self.opt_num(name, min, max)?
            .ok_or_else(|| Refusal::at(self.path(name), "is required"))
    }

    pub fn opt_bool(&self, name: &str) -> Read<Option<bool>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            // Gemini's `safety_acknowledgement` style: booleans as strings.
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(_) => Err(Refusal::at(self.path(name), "must be a boolean")),
        }
    }

    /// `[x, y]`: two finite numbers (Anthropic's `coordinate`).
    pub fn opt_pair(&self, name: &str) -> Read<Option<(f64, f64)>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let pair = v.as_array().filter(|a| a.len() == 2).and_then(|a| {
            let x = a[0].as_f64().filter(|n| n.is_finite())?;
            let y = a[1].as_f64().filter(|n| n.is_finite())?;
            Some((x, y))
        });
        pair.map(Some)
            .ok_or_else(|| Refusal::at(self.path(name), "must be [x, y]: two numbers"))
    }

    /// `[x0, y0, x1, y1]` (Anthropic's zoom `region`).
    pub fn quad(&self, name: &str) -> Read<[f64; 4]> {
        let v = self
            .get(name)
            .ok_or_else(|| Refusal::at(self.path(name), "is required"))?;
        let nums: Option<Vec<f64>> = v
            .as_array()
            .filter(|a| a.len() == 4)
            .map(|a| {
                a.iter()
                    .map(|n| n.as_f64().filter(|n| n.is_finite()))
                    .collect()
            })
            .and_then(|v: Vec<Option<f64>>| v.into_iter().collect());
        match nums {
            Some(n) => Ok([n[0], n[1], n[2], n[3]]),
            None => Err(Refusal::at(
                self.path(name),
                "must be [x0, y0, x1, y1]: four numbers",
            )),
        }
    }
}

/// A display size the caller declares in two members (a vendor tool definition's
/// `display_width_px`/`display_height_px`, or the preview's `display_width`/
/// `display_height`): both or neither.
pub(crate) fn declared_size(v: &Value, width: &str, height: &str) -> Read<Option<(u32, u32)>> {
    let Some(m) = v.as_object() else {
        return Ok(None);
    };
    let dim = |k: &str| -> Read<Option<u32>> {
        match m.get(k).filter(|x| !x.is_null()) {
            None => Ok(None),
            Some(x) => x
                .as_u64()
                .filter(|n| (1..=16384).contains(n))
                .map(|n| Some(n as u32))
                .ok_or_else(|| Refusal::at(k, "must be an integer from 1 to 16384")),
        }
    };
    match (dim(width)?, dim(height)?) {
        (Some(w), Some(h)) => Ok(Some((w, h))),
        (None, None) => Ok(None),
        _ => Err(Refusal::at(
            width,
            format!("give {width} and {height} together"),
        )),
    }
}
