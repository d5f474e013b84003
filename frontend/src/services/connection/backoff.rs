//! The reconnect schedule: exponential from 0.5 s to 30 s, with jitter so
//! that a restarted bridge is not hit by every browser at the same instant.

/// First delay after a connection is lost.
pub const INITIAL_MS: u32 = 500;
/// Longest delay between attempts.
pub const MAX_MS: u32 = 30_000;

/// The delay before attempt `attempt` (0 for the first retry), without jitter.
pub fn base_delay_ms(attempt: u32) -> u32 {
    let factor = 1u64 << attempt.min(16);
    (u64::from(INITIAL_MS) * factor).min(u64::from(MAX_MS)) as u32
}

/// The delay with jitter: `random` in [0, 1) spreads it over ±25 % of the
/// base, kept within [`INITIAL_MS`, `MAX_MS`].
pub fn delay_ms(attempt: u32, random: f64) -> u32 {
    let r = if random.is_finite() {
        random.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let base = f64::from(base_delay_ms(attempt));
    let jittered = base * (0.75 + 0.5 * r);
    (jittered.round() as u32).clamp(INITIAL_MS, MAX_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_doubles_up_to_the_cap() {
        let schedule: Vec<u32> = (0..9).map(base_delay_ms).collect();
        assert_eq!(
            schedule,
            [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
        );
        assert_eq!(base_delay_ms(u32::MAX), MAX_MS);
    }

    #[test]
    fn jitter_stays_in_bounds() {
        for attempt in 0..40 {
            for r in [0.0, 0.1, 0.5, 0.9, 0.999_999, 1.0, -3.0, f64::NAN] {
                let d = delay_ms(attempt, r);
                assert!((INITIAL_MS..=MAX_MS).contains(&d), "{attempt} {r} {d}");
                let base = base_delay_ms(attempt);
                assert!(f64::from(d) >= f64::from(base) * 0.75 - 1.0);
                assert!(f64::from(d) <= f64::from(base) * 1.25 + 1.0);
            }
        }
        assert_eq!(delay_ms(3, 0.0), 3000);
        assert_eq!(delay_ms(3, 1.0), 5000);
        assert_ne!(delay_ms(4, 0.1), delay_ms(4, 0.9));
    }
}
