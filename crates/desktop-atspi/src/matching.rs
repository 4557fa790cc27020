//! Which X11 window an accessible top-level is: same process (pid), then the best of
//! title and position. The same function serves snapshots and element re-reads, so a
//! node's `window_id` is the same both times.

use cc_protocol::PhysicalRect;

use crate::Toplevel;

/// What is known of one accessible top-level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Top {
    pub name: String,
    pub showing: bool,
    pub rect: Option<PhysicalRect>,
}

fn distance(a: PhysicalRect, b: PhysicalRect) -> u64 {
    let d = |x: i64, y: i64| x.abs_diff(y);
    d(i64::from(a.x), i64::from(b.x))
        + d(i64::from(a.y), i64::from(b.y))
        + d(i64::from(a.width), i64::from(b.width))
        + d(i64::from(a.height), i64::from(b.height))
}

/// How well a top-level fits a window (higher is better; 0 is no evidence).
fn score(top: &Top, w: &Toplevel) -> u64 {
    let mut s = 0;
    if !top.name.is_empty() && top.name == w.info.title {
        s += 40;
    }
    if let Some(r) = top.rect {
        let d = distance(r, w.info.rect).min(distance(r, w.client));
        if d == 0 {
            s += 60;
        } else {
            // Client-side decorations add invisible margins: near is evidence too.
            s += 30u64.saturating_sub(d / 8);
        }
    }
    s
}

/// Assigns each showing top-level of one application to at most one window (and each
/// window to at most one top-level). With the application's pid, only its windows are
/// candidates and any evidence suffices (one showing top-level and one window match
/// outright); without a pid, a title or an exact position is required.
pub(crate) fn assign(pid: Option<u32>, tops: &[Top], wins: &[Toplevel]) -> Vec<Option<u64>> {
    let by_pid: Vec<&Toplevel> = match pid {
        Some(p) => wins.iter().filter(|w| w.info.pid == Some(p)).collect(),
        None => Vec::new(),
    };
    let (candidates, threshold) = if by_pid.is_empty() {
        (wins.iter().collect::<Vec<_>>(), 40)
    } else {
        (by_pid, 1)
    };
    let mut out = vec![None; tops.len()];
    let showing: Vec<usize> = (0..tops.len()).filter(|&i| tops[i].showing).collect();
    if threshold == 1 && showing.len() == 1 && candidates.len() == 1 {
        out[showing[0]] = Some(candidates[0].info.id);
        return out;
    }
    let mut pairs: Vec<(u64, usize, usize)> = Vec::new();
    for &t in &showing {
        for (c, w) in candidates.iter().enumerate() {
            let s = score(&tops[t], w);
            if s >= threshold {
                pairs.push((s, t, c));
            }
        }
    }
    // Best evidence first; ties keep the app's and the stacking order.
    pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut used = vec![false; candidates.len()];
    for (_, t, c) in pairs {
        if out[t].is_none() && !used[c] {
            out[t] = Some(candidates[c].info.id);
            used[c] = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_desktop::WindowInfo;

    fn rect(x: i32, y: i32, w: u32, h: u32) -> PhysicalRect {
        PhysicalRect {
            x,
            y,
            width: w,
            height: h,
        }
    }

    fn win(id: u64, pid: Option<u32>, title: &str, r: PhysicalRect) -> Toplevel {
        Toplevel {
            info: WindowInfo {
                id,
                app_id: "app".into(),
                pid,
                title: title.into(),
                rect: r,
                focused: false,
            },
            client: r,
        }
    }

    fn top(name: &str, showing: bool, r: Option<PhysicalRect>) -> Top {
        Top {
            name: name.into(),
            showing,
            rect: r,
        }
    }

    #[test]
    fn one_window_of_the_process_matches_outright() {
        let wins = [
            win(1, Some(7), "Other", rect(0, 0, 10, 10)),
            win(2, Some(9), "Mine", rect(50, 50, 100, 100)),
        ];
        let tops = [top("", true, None), top("hidden", false, None)];
        assert_eq!(assign(Some(9), &tops, &wins), [Some(2), None]);
    }

    #[test]
    fn several_windows_go_by_title_and_position() {
        let wins = [
            win(1, Some(9), "Editor", rect(0, 0, 800, 600)),
            win(2, Some(9), "Find", rect(100, 100, 300, 200)),
        ];
        let tops = [
            top("Find", true, Some(rect(100, 100, 300, 200))),
            top("Editor", true, Some(rect(0, 0, 800, 600))),
        ];
        assert_eq!(assign(Some(9), &tops, &wins), [Some(2), Some(1)]);
    }

    #[test]
    fn without_a_pid_weak_evidence_is_not_enough() {
        let wins = [win(1, None, "Editor", rect(0, 0, 800, 600))];
        let near = [top("x", true, Some(rect(4, 4, 800, 600)))];
        assert_eq!(assign(None, &near, &wins), [None]);
        let titled = [top("Editor", true, None)];
        assert_eq!(assign(None, &titled, &wins), [Some(1)]);
        assert_eq!(
            assign(Some(5), &titled, &wins),
            [Some(1)],
            "pid unknown to X"
        );
    }
}
