//! The geometry of the history graphs, apart from drawing them: which
//! scale the value axis gets, where the time axis' labels go, and the SVG
//! path of a series (a line and the area under it), broken where the
//! history has no point, so a gap shows as a gap and nothing is invented.
//! Pure arithmetic over plain numbers, tested natively; the SVG itself is
//! drawn by `components::history_graph`.

use std::fmt::Write;

/// The value axis: from 0 to `max`, labelled every `tick`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub max: f64,
    pub tick: f64,
}

/// The most labels on the value axis above 0.
const VALUE_LABELS: f64 = 4.0;

/// A scale with round labels that holds `peak` and at least `floor` (a
/// server's slots, so one player does not fill the graph), and at least 1.
pub fn scale(peak: f64, floor: f64) -> Scale {
    let top = peak.max(floor).max(1.0);
    let mut tick = 1.0;
    // 1, 2, 5, 10, 20, 50, …: the first with few enough labels.
    for step in [2.0, 2.5, 2.0].into_iter().cycle() {
        if (top / tick).ceil() <= VALUE_LABELS {
            break;
        }
        tick *= step;
    }
    Scale {
        max: (top / tick).ceil() * tick,
        tick,
    }
}

impl Scale {
    /// The labelled values, 0 first.
    pub fn ticks(self) -> Vec<f64> {
        let n = (self.max / self.tick).round() as usize;
        (0..=n).map(|i| i as f64 * self.tick).collect()
    }
}

/// Where a graph draws: `w` × `h` user units for the time from `from_ms`
/// to `to_ms` and the values of `scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub w: f64,
    pub h: f64,
    pub from_ms: f64,
    pub to_ms: f64,
    pub scale: Scale,
}

impl Frame {
    /// The x of time `t` (clamped to the frame).
    pub fn x(&self, t: f64) -> f64 {
        let span = (self.to_ms - self.from_ms).max(1.0);
        // Not `clamp`: its check of the bounds formats floats in its
        // panic message, which costs the bundle kilobytes.
        ((t - self.from_ms) / span * self.w).max(0.0).min(self.w)
    }

    /// The y of value `v` (0 at the bottom, clamped to the frame).
    pub fn y(&self, v: f64) -> f64 {
        (self.h - v / self.scale.max * self.h).max(0.0).min(self.h)
    }
}

/// A series drawn: the line's and the area's path data (`d`), and how
/// many points they hold and in how many unbroken runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Paths {
    pub line: String,
    pub area: String,
    pub points: usize,
    pub runs: usize,
}

/// The paths of `series` (`(t, value)`, oldest first, each point the mean
/// of the interval of `step_ms` from `t`), each point at its interval's
/// middle. A run breaks where an interval is absent (the history took no
/// sample then) or has no value (offline throughout); a run of one point
/// is a short dash, so it still shows. Points outside the frame's time are
/// left out.
pub fn paths(series: &[(f64, Option<f64>)], step_ms: f64, frame: &Frame) -> Paths {
    let mut out = Paths::default();
    let base = frame.y(0.0);
    // The current run's points, to close its area.
    let mut run: Vec<(f64, f64)> = Vec::new();
    let mut last_t: Option<f64> = None;
    let flush = |run: &mut Vec<(f64, f64)>, out: &mut Paths| {
        let (Some(&(x0, y0)), Some(&(xn, _))) = (run.first(), run.last()) else {
            return;
        };
        let _ = write!(out.line, "M{}", xy(x0, y0));
        let _ = write!(out.area, "M{}L{}", xy(x0, base), xy(x0, y0));
        for &(x, y) in &run[1..] {
            let _ = write!(out.line, "L{}", xy(x, y));
            let _ = write!(out.area, "L{}", xy(x, y));
        }
        if run.len() == 1 {
            // A lone point: a dash as wide as a round cap, at least.
            let _ = write!(out.line, "h0.1");
        }
        let _ = write!(out.area, "L{}Z", xy(xn, base));
        out.runs += 1;
        run.clear();
    };
    for &(t, v) in series {
        if t + step_ms <= frame.from_ms || t > frame.to_ms {
            continue;
        }
        let adjacent = last_t.is_some_and(|p| t - p <= step_ms * 1.5);
        last_t = Some(t);
        let Some(v) = v.filter(|v| v.is_finite()) else {
            flush(&mut run, &mut out);
            continue;
        };
        if !adjacent {
            flush(&mut run, &mut out);
        }
        run.push((frame.x(t + step_ms / 2.0), frame.y(v)));
        out.points += 1;
    }
    flush(&mut run, &mut out);
    out
}

/// One decimal is finer than a pixel; fewer bytes for the DOM.
fn xy(x: f64, y: f64) -> String {
    format!("{},{}", tenths(x), tenths(y))
}

/// `v` with at most one decimal (`3`, `3.4`, `-0.5`), written with integer
/// arithmetic: Rust's float formatting would add kilobytes to the bundle
/// for what a graph needs.
pub fn tenths(v: f64) -> String {
    let n = (v * 10.0).round() as i64;
    let sign = if n < 0 { "-" } else { "" };
    let n = n.unsigned_abs();
    match n % 10 {
        0 => format!("{sign}{}", n / 10),
        d => format!("{sign}{}.{d}", n / 10),
    }
}

/// The times the time axis labels: every `tick_ms` on the local clock
/// (`offset_ms` ahead of UTC, so labels fall on local midnight or whole
/// hours), strictly inside `from_ms..to_ms`.
pub fn time_ticks(from_ms: f64, to_ms: f64, tick_ms: f64, offset_ms: f64) -> Vec<f64> {
    if tick_ms <= 0.0 || to_ms <= from_ms {
        return Vec::new();
    }
    let mut t = ((from_ms + offset_ms) / tick_ms).floor() * tick_ms - offset_ms;
    let mut out = Vec::new();
    while t < to_ms {
        if t > from_ms {
            out.push(t);
        }
        t += tick_ms;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(from: f64, to: f64, max: f64) -> Frame {
        Frame {
            w: 100.0,
            h: 50.0,
            from_ms: from,
            to_ms: to,
            scale: Scale { max, tick: 1.0 },
        }
    }

    #[test]
    fn scales_are_round_and_hold_the_peak() {
        assert_eq!(
            scale(0.0, 4.0),
            Scale {
                max: 4.0,
                tick: 1.0
            }
        );
        assert_eq!(
            scale(0.0, 0.0),
            Scale {
                max: 1.0,
                tick: 1.0
            }
        );
        assert_eq!(
            scale(3.2, 2.0),
            Scale {
                max: 4.0,
                tick: 1.0
            }
        );
        assert_eq!(
            scale(7.0, 4.0),
            Scale {
                max: 8.0,
                tick: 2.0
            }
        );
        assert_eq!(
            scale(12.0, 0.0),
            Scale {
                max: 15.0,
                tick: 5.0
            }
        );
        assert_eq!(
            scale(130.0, 0.0),
            Scale {
                max: 150.0,
                tick: 50.0
            }
        );
        assert_eq!(
            scale(1000.0, 0.0),
            Scale {
                max: 1000.0,
                tick: 500.0
            }
        );
        for peak in [0.5, 3.0, 9.9, 41.0, 77.0, 999.0, 12_345.0] {
            let s = scale(peak, 0.0);
            assert!(s.max >= peak, "{peak}: {s:?}");
            assert!(s.ticks().len() <= 5, "{peak}: {s:?}");
            assert_eq!(s.ticks().first(), Some(&0.0));
            assert_eq!(s.ticks().last(), Some(&s.max));
        }
    }

    #[test]
    fn adjacent_points_make_one_line_and_its_area() {
        let f = frame(0.0, 100.0, 4.0);
        let s = [(0.0, Some(0.0)), (10.0, Some(4.0)), (20.0, Some(2.0))];
        let p = paths(&s, 10.0, &f);
        assert_eq!(p.line, "M5,50L15,0L25,25");
        assert_eq!(p.area, "M5,50L5,50L15,0L25,25L25,50Z");
        assert_eq!((p.points, p.runs), (3, 1));
    }

    #[test]
    fn an_absent_interval_breaks_the_line() {
        let f = frame(0.0, 100.0, 4.0);
        // 20..30 has no point: the bridge took no sample then.
        let s = [(0.0, Some(2.0)), (10.0, Some(2.0)), (30.0, Some(2.0))];
        let p = paths(&s, 10.0, &f);
        assert_eq!(p.line, "M5,25L15,25M35,25h0.1");
        assert_eq!((p.points, p.runs), (3, 2));
        assert_eq!(p.area.matches('Z').count(), 2);
    }

    #[test]
    fn offline_throughout_breaks_the_line_and_adds_no_point() {
        let f = frame(0.0, 100.0, 4.0);
        let s = [(0.0, Some(1.0)), (10.0, None), (20.0, Some(1.0))];
        let p = paths(&s, 10.0, &f);
        assert_eq!((p.points, p.runs), (2, 2));
        assert!(!p.line.contains("15,"), "{}", p.line);
    }

    #[test]
    fn points_outside_the_frame_are_left_out_and_values_clamped() {
        let f = frame(100.0, 200.0, 4.0);
        let s = [(50.0, Some(1.0)), (150.0, Some(9.0)), (250.0, Some(1.0))];
        let p = paths(&s, 10.0, &f);
        assert_eq!(p.line, "M55,0h0.1");
        assert_eq!(p.points, 1);
        assert_eq!(paths(&[], 10.0, &f), Paths::default());
    }

    #[test]
    fn numbers_are_written_with_one_decimal_at_most() {
        assert_eq!(tenths(3.0), "3");
        assert_eq!(tenths(3.44), "3.4");
        assert_eq!(tenths(2.96), "3");
        assert_eq!(tenths(-0.46), "-0.5");
        assert_eq!(tenths(0.04), "0");
        assert_eq!(tenths(1234.56), "1234.6");
    }

    #[test]
    fn time_labels_fall_on_the_local_clock() {
        const H: f64 = 3_600_000.0;
        // UTC: every 6 h from 00:00, strictly inside.
        assert_eq!(
            time_ticks(0.0, 24.0 * H, 6.0 * H, 0.0),
            vec![6.0 * H, 12.0 * H, 18.0 * H]
        );
        // Two hours ahead of UTC: local 06:00 is 04:00 UTC.
        assert_eq!(
            time_ticks(0.0, 24.0 * H, 6.0 * H, 2.0 * H),
            vec![4.0 * H, 10.0 * H, 16.0 * H, 22.0 * H]
        );
        assert!(time_ticks(10.0, 5.0, H, 0.0).is_empty());
    }
}
