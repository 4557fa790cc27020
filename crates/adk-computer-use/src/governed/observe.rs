//! Observations from tool answers, reduced to digests: a screenshot's image block and an
//! accessibility snapshot's tree.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::caller::ToolReply;
use super::reply::invalid_response;
use crate::runtime::{RuntimeResult, SemanticObservation, VisualObservation};

/// A screenshot answer: the image block is required (pixels are the observation); the
/// size comes from the result, else from the PNG header.
pub fn visual(operation: &'static str, reply: ToolReply) -> RuntimeResult<VisualObservation> {
    let image = reply
        .image
        .ok_or_else(|| invalid_response(operation, "the screenshot has no image block"))?;
    let dimension = |key: &str| {
        reply
            .structured
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
    };
    let (width, height) = match (dimension("width"), dimension("height")) {
        (Some(w), Some(h)) => (w, h),
        _ => png_size(&image.bytes).ok_or_else(|| {
            invalid_response(operation, "the screenshot states no size and is not a PNG")
        })?,
    };
    let frame_id = match reply.structured.get("frame") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    Ok(VisualObservation {
        digest: bytes_digest(&image.bytes),
        width,
        height,
        frame_id,
        image: Some(image.bytes),
    })
}

/// An accessibility snapshot answer: the digest is over the tree's JSON text, so the same
/// UI gives the same digest whatever snapshot id or timestamp the answer carries.
pub fn semantic(operation: &'static str, reply: ToolReply) -> RuntimeResult<SemanticObservation> {
    let tree = reply
        .structured
        .get("tree")
        .cloned()
        .ok_or_else(|| invalid_response(operation, "the snapshot has no `tree`"))?;
    let node_count = match reply.structured.get("node_count").and_then(Value::as_u64) {
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None => count(&tree),
    };
    Ok(SemanticObservation {
        digest: cc_contract::value_digest(&tree.to_string()),
        node_count,
        tree: Some(tree),
    })
}

/// `sha256:` + hex of `bytes`.
pub fn bytes_digest(bytes: &[u8]) -> String {
    let mut out = String::from("sha256:");
    for byte in Sha256::digest(bytes) {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if bytes.get(..8)? != SIGNATURE || bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    let word = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    Some((word(16)?, word(20)?))
}

/// Nodes of a tree (an object with `children`, or an array of roots).
fn count(tree: &Value) -> usize {
    match tree {
        Value::Array(roots) => roots.iter().map(count).sum(),
        Value::Object(node) => 1 + node.get("children").map_or(0, count),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governed::caller::ToolImage;
    use serde_json::json;

    fn reply(structured: Value, image: Option<Vec<u8>>) -> ToolReply {
        ToolReply {
            raw: structured.to_string(),
            structured,
            image: image.map(|bytes| ToolImage {
                mime_type: "image/png".into(),
                bytes,
            }),
        }
    }

    #[test]
    fn screenshot_without_an_image_is_refused() {
        let err = visual("screen_capture", reply(json!({"width": 1}), None)).expect_err("no image");
        assert!(err.to_string().contains("no image block"), "{err}");
    }

    #[test]
    fn size_falls_back_to_the_png_header_and_garbage_is_refused() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        let seen = visual("screen_capture", reply(json!({}), Some(png.clone()))).expect("png");
        assert_eq!((seen.width, seen.height), (640, 480));
        assert_eq!(seen.digest, bytes_digest(&png));
        assert!(visual("screen_capture", reply(json!({}), Some(b"GIF89a".to_vec()))).is_err());
    }

    #[test]
    fn snapshot_digest_is_over_the_tree_and_requires_one() {
        let tree = json!([{"role": "window", "children": [{"role": "button"}]}]);
        let a = semantic(
            "a11y_snapshot",
            reply(json!({"tree": tree, "snapshot_id": "s1"}), None),
        )
        .expect("snapshot");
        let b = semantic(
            "a11y_snapshot",
            reply(json!({"tree": tree, "snapshot_id": "s2"}), None),
        )
        .expect("snapshot");
        assert_eq!(a.digest, b.digest);
        assert_eq!(a.node_count, 2);
        assert!(semantic("a11y_snapshot", reply(json!({}), None)).is_err());
    }
}
