//! A session starts on the desk's platform with the capabilities the desk declares;
//! the default canvas is the largest image a model takes as it is, and the default
//! capture is that canvas; `tools.list` agrees with the capabilities, each tool a
//! missing capability gates refused with its reason.

use serde_json::json;

use super::{listed, tools_of};
use crate::conformance::desk::{Desk, serve};

pub fn platform_and_capabilities<D: Desk>() {
    let desk = D::start();
    let mut s = serve(&desk, "info", None);
    let r = s.start_session(json!({}));
    assert_eq!(r["platform"], D::PLATFORM, "{r}");
    let caps = desk.capabilities();
    assert_eq!(r["capabilities"], caps, "{r}");
    assert!(
        s.stderr_text()
            .contains(&format!("platform: {}", D::PLATFORM)),
        "{}",
        s.stderr_text()
    );
    // 1920×1080 shown 1430×804: the largest a model takes as it is.
    assert_eq!(
        (
            &r["surface"]["display_width_px"],
            &r["surface"]["display_height_px"]
        ),
        (&json!(1430), &json!(804)),
        "{r}"
    );
    let cap = s.ok("screen.capture", json!({"format": "png", "size": "canvas"}));
    assert_eq!(cap["width"], 1430);
    let cap = s.ok("screen.capture", json!({}));
    assert_eq!(
        (cap["width"].as_u64(), cap["height"].as_u64()),
        (Some(1430), Some(804))
    );

    let list = s.method_ok("tools.list", json!({}));
    let caps = caps
        .as_object()
        .expect("capabilities are an object")
        .clone();
    for (capability, can) in caps {
        for (tool, args) in tools_of(&capability) {
            let t = listed(&list, tool);
            assert_eq!(t["available"], can, "{capability}: {t}");
            if can == true {
                assert!(t.get("reason").is_none(), "{t}");
            } else {
                super::assert_says_why(t, &capability);
                if !args.is_null() {
                    s.fails(tool, args, "backend_unavailable");
                }
            }
        }
    }
}
