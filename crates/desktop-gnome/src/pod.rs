//! The two SPA pods the frame reader exchanges with PipeWire, in their documented binary
//! layout (<https://docs.pipewire.org/page_spa_pod.html>): the video formats it accepts
//! (an `EnumFormat` object it builds) and the format a stream settled on (a `Format`
//! object it reads). PipeWire's own builder and parser are inline functions of its C
//! headers, not symbols of the library, so they are written here, in plain safe code: a
//! pod is a 32-bit size and type, its body, and padding to 8 bytes; every read is
//! bounds-checked, so a malformed pod is ignored, never a panic.

/// Pod types (`enum spa_type`).
const TYPE_ID: u32 = 3;
const TYPE_RECTANGLE: u32 = 10;
const TYPE_FRACTION: u32 = 11;
const TYPE_OBJECT: u32 = 15;
const TYPE_CHOICE: u32 = 19;

/// Choice kinds (`enum spa_choice_type`).
const CHOICE_RANGE: u32 = 1;
const CHOICE_ENUM: u32 = 3;

/// The format object's type and the parameter ids (`SPA_TYPE_OBJECT_Format`,
/// `SPA_PARAM_EnumFormat`, `SPA_PARAM_Format`).
const OBJECT_FORMAT: u32 = 0x40003;
const PARAM_ENUM_FORMAT: u32 = 3;
/// The parameter id of a stream's settled format, as `param_changed` reports it.
pub const PARAM_FORMAT: u32 = 4;

/// Format object keys (`enum spa_format`).
const MEDIA_TYPE: u32 = 1;
const MEDIA_SUBTYPE: u32 = 2;
const VIDEO_FORMAT: u32 = 0x20001;
const VIDEO_SIZE: u32 = 0x20003;
const VIDEO_FRAMERATE: u32 = 0x20004;

/// `SPA_MEDIA_TYPE_video`, `SPA_MEDIA_SUBTYPE_raw`.
const MEDIA_VIDEO: u32 = 2;
const SUBTYPE_RAW: u32 = 1;

/// The 4-byte pixel formats the reader copies (`enum spa_video_format`).
pub const RGBX: u32 = 7;
pub const BGRX: u32 = 8;
pub const RGBA: u32 = 11;
pub const BGRA: u32 = 12;

/// What a settled video format says: the pixel format and the frame size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VideoFormat {
    pub format: u32,
    pub width: u32,
    pub height: u32,
}

fn words(out: &mut Vec<u8>, ws: &[u32]) {
    for w in ws {
        out.extend_from_slice(&w.to_ne_bytes());
    }
}

/// A pod of `ty` around `body`, padded to 8 bytes (the padding is not in its size).
fn pod(ty: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + body.len() + 7);
    words(&mut out, &[body.len() as u32, ty]);
    out.extend_from_slice(body);
    out.resize(out.len().next_multiple_of(8), 0);
    out
}

fn id(v: u32) -> Vec<u8> {
    pod(TYPE_ID, &v.to_ne_bytes())
}

/// A choice of `kind` over values of `child` type, each `size / 4` words of `values`.
fn choice(kind: u32, child: u32, size: u32, values: &[u32]) -> Vec<u8> {
    let mut body = Vec::new();
    words(&mut body, &[kind, 0, size, child]);
    words(&mut body, values);
    pod(TYPE_CHOICE, &body)
}

/// The formats the reader accepts: raw video in 4-byte BGR or RGB (BGRx preferred, as
/// Mutter sends it), any size up to 16384², any frame rate up to 1000/s.
pub fn enum_format() -> Vec<u8> {
    let props: [(u32, Vec<u8>); 5] = [
        (MEDIA_TYPE, id(MEDIA_VIDEO)),
        (MEDIA_SUBTYPE, id(SUBTYPE_RAW)),
        (
            VIDEO_FORMAT,
            choice(CHOICE_ENUM, TYPE_ID, 4, &[BGRX, BGRX, BGRA, RGBX, RGBA]),
        ),
        (
            VIDEO_SIZE,
            choice(
                CHOICE_RANGE,
                TYPE_RECTANGLE,
                8,
                &[1920, 1080, 1, 1, 16384, 16384],
            ),
        ),
        (
            VIDEO_FRAMERATE,
            choice(CHOICE_RANGE, TYPE_FRACTION, 8, &[30, 1, 0, 1, 1000, 1]),
        ),
    ];
    let mut body = Vec::new();
    words(&mut body, &[OBJECT_FORMAT, PARAM_ENUM_FORMAT]);
    for (key, value) in props {
        words(&mut body, &[key, 0]);
        body.extend_from_slice(&value);
    }
    pod(TYPE_OBJECT, &body)
}

fn word(b: &[u8], at: usize) -> Option<u32> {
    let w = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
}

/// A value pod's type and body; a choice stands for its first (default) value.
fn value(ty: u32, body: &[u8]) -> Option<(u32, &[u8])> {
    if ty != TYPE_CHOICE {
        return Some((ty, body));
    }
    let size = word(body, 8)? as usize;
    let child = word(body, 12)?;
    Some((child, body.get(16..16usize.checked_add(size)?)?))
}

/// The pixel format and size of a `Format` object (a stream's settled format); `None`
/// when the pod is not one or lacks either.
pub fn video_format(p: &[u8]) -> Option<VideoFormat> {
    let size = word(p, 0)? as usize;
    if word(p, 4)? != TYPE_OBJECT {
        return None;
    }
    let body = p.get(8..8usize.checked_add(size)?)?;
    let (mut format, mut dims) = (None, None);
    // After the object's type and id: key, flags, then the value pod.
    let mut at = 8usize;
    while at + 16 <= body.len() {
        let key = word(body, at)?;
        let len = word(body, at + 8)? as usize;
        let ty = word(body, at + 12)?;
        let start = at + 16;
        let v = body.get(start..start.checked_add(len)?)?;
        match (key, value(ty, v)?) {
            (VIDEO_FORMAT, (TYPE_ID, v)) => format = word(v, 0),
            (VIDEO_SIZE, (TYPE_RECTANGLE, v)) => dims = Some((word(v, 0)?, word(v, 4)?)),
            _ => {}
        }
        at = start.checked_add(len)?.next_multiple_of(8);
    }
    let (width, height) = dims?;
    Some(VideoFormat {
        format: format?,
        width,
        height,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn as_words(b: &[u8]) -> Vec<u32> {
        b.chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// The words PipeWire's own builder (`spa_pod_builder_add_object` with the same
    /// properties, libspa 0.3.65) writes for this object.
    #[test]
    fn the_accepted_formats_are_the_pod_pipewire_builds() {
        #[rustfmt::skip]
        let expected: [u32; 58] = [
            224, 15, 262147, 3, 1, 0, 4, 3,
            2, 0, 2, 0, 4, 3, 1, 0,
            131073, 0, 36, 19, 3, 0, 4, 3,
            8, 8, 12, 7, 11, 0, 131075, 0,
            40, 19, 1, 0, 8, 10, 1920, 1080,
            1, 1, 16384, 16384, 131076, 0, 40, 19,
            1, 0, 8, 11, 30, 1, 0, 1,
            1000, 1,
        ];
        assert_eq!(as_words(&enum_format()), expected);
    }

    /// A settled format as PipeWire's `spa_format_video_raw_build` writes it (BGRx,
    /// 1920×1080, frame rate 0/1), and the same with its values wrapped in choices.
    #[test]
    fn a_settled_format_is_read_and_a_malformed_one_ignored() {
        #[rustfmt::skip]
        let settled: [u32; 34] = [
            128, 15, 262147, 4, 1, 0, 4, 3,
            2, 0, 2, 0, 4, 3, 1, 0,
            131073, 0, 4, 3, 8, 0, 131075, 0,
            8, 10, 1920, 1080, 131076, 0, 8, 11,
            0, 1,
        ];
        let mut p = Vec::new();
        words(&mut p, &settled);
        let want = VideoFormat {
            format: BGRX,
            width: 1920,
            height: 1080,
        };
        assert_eq!(video_format(&p), Some(want));
        // Every truncation is refused without a panic.
        for n in 0..p.len() {
            assert_eq!(video_format(&p[..n]), None, "{n} bytes");
        }
        // A size field past the end, or another pod type, is refused.
        let mut long = p.clone();
        long[0..4].copy_from_slice(&4096u32.to_ne_bytes());
        assert_eq!(video_format(&long), None);
        let mut other = p.clone();
        other[4..8].copy_from_slice(&TYPE_CHOICE.to_ne_bytes());
        assert_eq!(video_format(&other), None);
        // Values inside choices (a peer that did not fixate) read as their defaults.
        let mut body = Vec::new();
        words(&mut body, &[OBJECT_FORMAT, PARAM_FORMAT, VIDEO_FORMAT, 0]);
        body.extend_from_slice(&choice(CHOICE_ENUM, TYPE_ID, 4, &[RGBA, BGRX]));
        words(&mut body, &[VIDEO_SIZE, 0]);
        body.extend_from_slice(&choice(
            CHOICE_RANGE,
            TYPE_RECTANGLE,
            8,
            &[64, 32, 1, 1, 99, 99],
        ));
        let chosen = pod(TYPE_OBJECT, &body);
        assert_eq!(
            video_format(&chosen),
            Some(VideoFormat {
                format: RGBA,
                width: 64,
                height: 32
            })
        );
        // No size: not a format the reader can use.
        let mut body = Vec::new();
        words(&mut body, &[OBJECT_FORMAT, PARAM_FORMAT, VIDEO_FORMAT, 0]);
        body.extend_from_slice(&id(BGRX));
        assert_eq!(video_format(&pod(TYPE_OBJECT, &body)), None);
    }
}
