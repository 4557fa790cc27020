//! One desk, two transports: the vendors' vocabularies called on the real server over
//! the plugin protocol (stdio `tools.call`) and over MCP (the official SDK client over
//! a `serve --transport mcp` child), with the desktop read back through plain tools on
//! the same connection. Results are normalized to the vendor's own shape so one table
//! of calls and checks runs on both.
#![allow(dead_code)]

use std::time::Duration;

use base64::Engine as _;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::common::{Server, find_node};

const TIMEOUT: Duration = Duration::from_secs(60);

/// A refusal, whichever transport carried it.
#[derive(Debug, Clone)]
pub struct Refused {
    pub code: String,
    pub message: String,
    /// The vendor-shaped answer, where the transport carries one.
    pub vendor: Option<Value>,
}

/// The operator's canvas for these tests: 1920 wide over the 1920×1080 virtual desk
/// (canvas units are physical pixels), so each vendor's screenshot space is the one its
/// reference derives from such a screen.
pub const FULL_CANVAS: &str = r#"{"capture": {"default_width": 1920}}"#;

/// A server on the virtual desktop, reached one way or the other.
pub enum Desk {
    Stdio(Box<Server>),
    Mcp {
        rt: tokio::runtime::Runtime,
        client: Box<RunningService<RoleClient, ()>>,
        _dir: tempfile::TempDir,
    },
}

impl Desk {
    /// The plugin protocol over stdio, with a session started with `config`, on the
    /// operator's 1920 canvas ([`FULL_CANVAS`]).
    pub fn stdio(config: Value) -> Desk {
        let mut s = Server::start_with(Some(serde_json::from_str(FULL_CANVAS).unwrap()), &[]);
        s.start_session(config);
        Desk::Stdio(Box::new(s))
    }

    /// MCP over stdio (the session starts on the first call, as MCP clients do), on
    /// the operator's 1920 canvas ([`FULL_CANVAS`]).
    pub fn mcp() -> Desk {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let dir = tempfile::tempdir().expect("temp dir");
        let journal = dir.path().join("journal.db");
        let config = dir.path().join("config.json");
        std::fs::write(&config, FULL_CANVAS).expect("config file");
        let client = rt.block_on(async {
            let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_computer-control"))
                .configure(|c| {
                    c.args([
                        "serve",
                        "--transport",
                        "mcp",
                        "--platform",
                        "virtual",
                        "--journal",
                    ])
                    .arg(&journal)
                    .arg("--config")
                    .arg(&config)
                    .env_remove("COMPUTER_CONTROL_CONFIG")
                    .env_remove("COMPUTER_CONTROL_PRINCIPAL")
                    .env("COMPUTER_CONTROL_LOG", "warn");
                });
            let transport = TokioChildProcess::new(cmd).expect("spawn the server");
            tokio::time::timeout(TIMEOUT, ().serve(transport))
                .await
                .expect("initialize in time")
                .expect("initialize")
        });
        Desk::Mcp {
            rt,
            client: Box::new(client),
            _dir: dir,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Desk::Stdio(_) => "stdio",
            Desk::Mcp { .. } => "mcp",
        }
    }

    fn mcp_call(&self, name: &str, args: Value) -> CallToolResult {
        let Desk::Mcp { rt, client, .. } = self else {
            unreachable!("an MCP desk")
        };
        let Value::Object(args) = args else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        rt.block_on(async {
            tokio::time::timeout(TIMEOUT, client.call_tool(params))
                .await
                .expect("answer in time")
                .expect("a tool result")
        })
    }

    /// A vocabulary call (`anthropic.computer`, …): the vendor's result, or the refusal.
    pub fn vendor(&mut self, name: &str, args: Value) -> Result<Value, Refused> {
        match self {
            Desk::Stdio(s) => {
                let env = s.tool(name, args);
                if env["ok"] == json!(true) {
                    return Ok(env["result"].clone());
                }
                let e = &env["error"];
                Err(Refused {
                    code: e["code"].as_str().unwrap_or_default().to_string(),
                    message: e["message"].as_str().unwrap_or_default().to_string(),
                    vendor: e["data"].get("vendor_result").cloned(),
                })
            }
            Desk::Mcp { .. } => {
                let r = self.mcp_call(&name.replace('.', "_"), args);
                let anthropic = name.starts_with("anthropic");
                if r.is_error == Some(true) {
                    return Err(if anthropic {
                        let blocks = anthropic_blocks(&r);
                        let text = blocks[0]["text"].as_str().unwrap_or_default().to_string();
                        let (code, message) = text.split_once(": ").unwrap_or(("", &text));
                        Refused {
                            code: code.to_string(),
                            message: message.to_string(),
                            vendor: Some(json!({"content": blocks, "is_error": true})),
                        }
                    } else {
                        let e = r.structured_content.expect("structured error");
                        Refused {
                            code: e["error"].as_str().unwrap_or_default().to_string(),
                            message: e["message"].as_str().unwrap_or_default().to_string(),
                            vendor: None,
                        }
                    });
                }
                if anthropic {
                    let blocks = anthropic_blocks(&r);
                    // The structured copy is the same answer, the image's bytes named.
                    let s = r.structured_content.clone().expect("structured content");
                    assert_eq!(s["content"].as_array().map(Vec::len), Some(blocks.len()));
                    assert_eq!(s["is_error"], false);
                    return Ok(json!({"content": blocks, "is_error": false}));
                }
                // The screenshot also comes as an MCP image block, equal to the one in
                // the structured item.
                let structured = r.structured_content.clone().expect("structured content");
                let image = r
                    .content
                    .iter()
                    .find_map(|c| c.as_image())
                    .expect("an image block");
                let inline = structured["output"]["image_url"]
                    .as_str()
                    .map(|u| u.split_once(',').expect("data url").1.to_string())
                    .or_else(|| {
                        structured["parts"][0]["inline_data"]["data"]
                            .as_str()
                            .map(String::from)
                    })
                    .expect("the screenshot in the structured item");
                assert_eq!(
                    image.data, inline,
                    "the image block is the item's screenshot"
                );
                Ok(structured)
            }
        }
    }

    /// A vocabulary call that must succeed.
    pub fn vendor_ok(&mut self, name: &str, args: Value) -> Value {
        let what = args.to_string();
        self.vendor(name, args)
            .unwrap_or_else(|e| panic!("{} {name} {what}: {e:?}", self.name()))
    }

    /// A vocabulary call that must be refused with `code`.
    pub fn vendor_refused(&mut self, name: &str, args: Value, code: &str) -> Refused {
        let what = args.to_string();
        match self.vendor(name, args) {
            Ok(r) => panic!("{} {name} {what} succeeded: {r}", self.name()),
            Err(e) => {
                assert_eq!(e.code, code, "{} {name} {what}: {e:?}", self.name());
                e
            }
        }
    }

    /// A plain tool's result, on the same connection.
    pub fn plain(&mut self, tool: &str, args: Value) -> Value {
        match self {
            Desk::Stdio(s) => s.ok(tool, args),
            Desk::Mcp { .. } => {
                let r = self.mcp_call(&tool.replace('.', "_"), args);
                assert_ne!(r.is_error, Some(true), "{tool}: {r:?}");
                r.structured_content.expect("structured content")
            }
        }
    }

    /// A plain `screen.capture` and its image as base64 (a data URL over the plugin
    /// protocol, an image content block over MCP).
    pub fn capture(&mut self, args: Value) -> (Value, String) {
        match self {
            Desk::Stdio(s) => {
                let r = s.ok("screen.capture", args);
                let url = r["data_url"].as_str().expect("data_url");
                let (_, b64) = url.split_once(";base64,").expect("a base64 data URL");
                let b64 = b64.to_string();
                (r, b64)
            }
            Desk::Mcp { .. } => {
                let r = self.mcp_call("screen_capture", args);
                assert_ne!(r.is_error, Some(true), "screen_capture: {r:?}");
                let b64 = r
                    .content
                    .iter()
                    .find_map(|c| c.as_image().map(|i| i.data.clone()))
                    .expect("an image block");
                (r.structured_content.expect("structured content"), b64)
            }
        }
    }

    /// The node with this role and name, from a fresh full snapshot.
    pub fn node(&mut self, role: &str, name: &str) -> Value {
        let snap = self.plain("a11y.snapshot", json!({"level": "full"}));
        find_node(&snap["tree"], role, name)
            .unwrap_or_else(|| panic!("no {role} {name:?}"))
            .clone()
    }

    /// The pointer's canvas position.
    pub fn pointer(&mut self) -> (i64, i64) {
        let p = self.plain("pointer.position", json!({}))["position"].clone();
        (p["x"].as_i64().unwrap(), p["y"].as_i64().unwrap())
    }

    pub fn window_rect(&mut self, title: &str) -> (i64, i64) {
        let list = self.plain("window.list", json!({}));
        let w = list["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["title"] == title)
            .unwrap_or_else(|| panic!("no window {title}"))
            .clone();
        (
            w["rect"]["x"].as_i64().unwrap(),
            w["rect"]["y"].as_i64().unwrap(),
        )
    }
}

/// MCP content blocks as Anthropic's.
fn anthropic_blocks(r: &CallToolResult) -> Vec<Value> {
    r.content
        .iter()
        .map(|c| {
            if let Some(t) = c.as_text() {
                json!({"type": "text", "text": t.text})
            } else if let Some(i) = c.as_image() {
                json!({"type": "image", "source": {"type": "base64", "media_type": i.mime_type, "data": i.data}})
            } else {
                panic!("unexpected block {c:?}")
            }
        })
        .collect()
}

/// The centre of a node's canvas rect.
pub fn centre(node: &Value) -> (f64, f64) {
    let r: Vec<f64> = node["rect"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    ((r[0] + r[2]) / 2.0, (r[1] + r[3]) / 2.0)
}

/// A PNG's size from base64.
pub fn png_size(b64: &str) -> (u32, u32) {
    let (w, h, _) = png_pixels(b64);
    (w, h)
}

/// A PNG from base64: its size and its pixels, decoded to RGB (or gray).
pub fn png_pixels(b64: &str) -> (u32, u32, Vec<u8>) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    let (w, h, _, px) = crate::common::decode_png(&bytes);
    (w, h, px)
}

/// The states of a node.
pub fn states(node: &Value) -> Vec<String> {
    node["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}
