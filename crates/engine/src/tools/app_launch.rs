//! `app.launch`: starts an application in the session's desktop. Running a program is
//! high risk unless the operator listed it in `apps.launch_allowed`.

use cc_desktop::Launched;
use cc_protocol::{Description, ErrorCode, Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::{Judged, count};
use super::exec::{Exec, drv};
use crate::config::Config;
use crate::spec::{Field, Ty};

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {
    app: String,
    args: Vec<String>,
}

pub(super) struct AppLaunch;

impl Tool for AppLaunch {
    type Args = Args;

    /// Its base risk is already high: any program may do anything the user can.
    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn operator_trusts(&self, a: &Args, config: &Config) -> bool {
        config.apps.launch_allowed.contains(&a.app)
    }

    fn describe(&self, a: &Args, _: &Judged<'_>) -> Description {
        let with = match a.args.len() {
            0 => String::new(),
            n => format!(" with {}", count(n, "argument", "arguments")),
        };
        Description {
            title: format!("Launch {}{with}", a.app),
            text: (!a.args.is_empty()).then(|| a.args.join(" ")),
            effect: Some("starts a program in the desktop session".into()),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.check_stop()?;
        match drv(ex.driver.launch(&a.app, &a.args))? {
            Launched::Started { pid, window } => {
                Ok(json!({"app": a.app, "pid": pid, "window": window}))
            }
            Launched::Refused(why) => Err(ToolError::with_data(
                ErrorCode::InvalidArguments,
                why.clone(),
                json!({"issues": [{"path": "app", "message": why}]}),
            )),
        }
    }
}

pub(crate) fn def() -> ToolDef {
    let word = |max| Ty::Str {
        max_chars: Some(max),
        non_empty: true,
    };
    ToolDef {
        name: "app.launch",
        summary: "Start an application (a desktop-file id or an executable on PATH, never a shell string), detached; high risk unless the operator allows it.",
        risk: Risk::High,
        needs: Needs::Launch,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: true,
        lands: Lands::Focused,
        outputs: &[
            ("app", "the application started"),
            ("pid", "its process id"),
            ("window", "its window id, where the desktop knows it at once; else null"),
        ],
        params: Ty::Object(vec![
            Field::req(
                "app",
                word(255),
                "a desktop-file id (org.gnome.Calculator) or an executable name on PATH (xterm)",
            ),
            Field::def(
                "args",
                Ty::list(
                    Ty::Str {
                        max_chars: Some(4096),
                        non_empty: false,
                    },
                    0,
                    Some(64),
                ),
                json!([]),
                "its arguments, each passed as is (no shell)",
            ),
        ]),
        examples: vec![
            json!({"app": "org.gnome.TextEditor"}),
            json!({"app": "xterm", "args": ["-title", "build"]}),
        ],
        check: no_check,
        runs: Runs::Alone(&AppLaunch),
    }
}
