//! Traffic generators: when finite TCP transfers start and how big they are.
//!
//! Everything is drawn up front, at build time, from the generator's own
//! random stream, so a run's traffic is a pure function of (scenario, seed)
//! and does not depend on what the network does (open-loop arrivals, as in
//! ns-2's Poisson and WebTraf generators).

use rand_distr::{Distribution, Exp, Geometric, Pareto};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Pareto (type I) with the given mean and shape (> 1): scale
/// x_m = mean (shape - 1) / shape, P(X > x) = (x_m / x)^shape for x >= x_m.
pub fn pareto_with_mean(rng: &mut Xoshiro256PlusPlus, mean: f64, shape: f64) -> f64 {
    let scale = mean * (shape - 1.0) / shape;
    Pareto::new(scale, shape)
        .expect("scale > 0 and shape > 1 validated")
        .sample(rng)
}

/// Exponential with the given mean (0 for a zero mean).
pub fn exponential_with_mean(rng: &mut Xoshiro256PlusPlus, mean: f64) -> f64 {
    if mean <= 0.0 {
        return 0.0;
    }
    Exp::new(1.0 / mean).expect("positive rate").sample(rng)
}

fn clamp_ns(x: f64) -> u64 {
    x.round().clamp(0.0, 1e18) as u64
}

/// Arrival times of a Poisson process of `rate_per_s` in [start_ns, end_ns):
/// exponential inter-arrival times of mean 1/rate.
pub fn poisson_arrivals(
    rng: &mut Xoshiro256PlusPlus,
    rate_per_s: f64,
    start_ns: u64,
    end_ns: u64,
) -> Vec<u64> {
    let mean_gap_ns = 1e9 / rate_per_s;
    let mut out = vec![];
    let mut t = start_ns as f64;
    loop {
        t += exponential_with_mean(rng, mean_gap_ns);
        if t >= end_ns as f64 {
            return out;
        }
        out.push(t as u64);
    }
}

/// ns-2 WebTraf-style sessions: each session starts at a uniform time in
/// [start, start + spread), then requests `pages` pages separated by
/// exponential inter-page times; a page has a geometric number of objects
/// (mean `objects_per_page`, at least one) separated by exponential
/// inter-object times; each object is one TCP transfer of Pareto size.
#[derive(Clone, Debug, PartialEq)]
pub struct WebModel {
    pub sessions: u32,
    pub start_ns: u64,
    pub spread_ns: u64,
    pub pages_per_session: u32,
    pub inter_page_mean_ns: f64,
    pub objects_per_page_mean: f64,
    pub inter_object_mean_ns: f64,
    pub object_size_mean_bytes: f64,
    pub object_size_shape: f64,
}

/// One web object: which session asked for it, when, and how many bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WebObject {
    pub session: u32,
    pub start_ns: u64,
    pub size_bytes: f64,
}

/// Draws every object of every session that starts before `end_ns`, in
/// session order.
pub fn web_objects(rng: &mut Xoshiro256PlusPlus, m: &WebModel, end_ns: u64) -> Vec<WebObject> {
    // Objects per page: 1 + Geometric(p) has mean 1/p on {1, 2, ...}.
    let per_page = Geometric::new(1.0 / m.objects_per_page_mean.max(1.0)).expect("mean >= 1");
    let mut out = vec![];
    for s in 0..m.sessions {
        let offset = if m.spread_ns > 0 {
            (rand_core::RngCore::next_u64(rng) % m.spread_ns) as f64
        } else {
            0.0
        };
        let mut page_t = m.start_ns as f64 + offset;
        for _ in 0..m.pages_per_session {
            if page_t >= end_ns as f64 {
                break;
            }
            let n = 1 + per_page.sample(rng);
            let mut t = page_t;
            for k in 0..n {
                if k > 0 {
                    t += exponential_with_mean(rng, m.inter_object_mean_ns);
                }
                let size = pareto_with_mean(rng, m.object_size_mean_bytes, m.object_size_shape);
                if t < end_ns as f64 {
                    out.push(WebObject {
                        session: s,
                        start_ns: clamp_ns(t),
                        size_bytes: size,
                    });
                }
            }
            page_t += exponential_with_mean(rng, m.inter_page_mean_ns);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::component_rng;

    fn rng(i: u64) -> Xoshiro256PlusPlus {
        component_rng(42, 99, i)
    }

    /// A Poisson process of rate 50/s over 2000 s: the count is within 4 sd
    /// (sd = sqrt(lambda T)) of lambda T, and inter-arrival gaps have mean
    /// 1/lambda and coefficient of variation 1 (exponential).
    #[test]
    fn poisson_count_and_gaps() {
        let (rate, secs) = (50.0, 2000.0);
        let a = poisson_arrivals(&mut rng(1), rate, 0, (secs * 1e9) as u64);
        let expect = rate * secs;
        assert!(
            ((a.len() as f64) - expect).abs() < 4.0 * expect.sqrt(),
            "{} arrivals",
            a.len()
        );
        let gaps: Vec<f64> = a.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e9).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (gaps.len() - 1) as f64;
        let se = (1.0 / rate) / (gaps.len() as f64).sqrt();
        assert!((mean - 1.0 / rate).abs() < 4.0 * se, "mean gap {mean}");
        let cov = var.sqrt() / mean;
        assert!((cov - 1.0).abs() < 0.02, "CoV {cov}");
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
    }

    /// Pareto sizes: every draw is at least x_m = mean (a-1)/a; the
    /// maximum-likelihood shape n / sum(ln(x/x_m)) (standard error a/sqrt(n))
    /// recovers the shape; for a finite-variance shape the sample mean is
    /// within 4 standard errors of the configured mean.
    #[test]
    fn pareto_mean_and_shape() {
        for (shape, mean) in [(1.2, 3000.0), (1.5, 30_000.0), (3.0, 1000.0)] {
            let n = 200_000;
            let mut r = rng((shape * 10.0) as u64);
            let xs: Vec<f64> = (0..n)
                .map(|_| pareto_with_mean(&mut r, mean, shape))
                .collect();
            let xm = mean * (shape - 1.0) / shape;
            assert!(xs.iter().all(|&x| x >= xm));
            let mle = n as f64 / xs.iter().map(|x| (x / xm).ln()).sum::<f64>();
            assert!(
                (mle - shape).abs() < 4.0 * shape / (n as f64).sqrt(),
                "shape {shape}: MLE {mle}"
            );
            // Tail: P(X > 10 x_m) = 10^-shape.
            let tail = xs.iter().filter(|&&x| x > 10.0 * xm).count() as f64 / n as f64;
            let p = 10f64.powf(-shape);
            assert!(
                (tail - p).abs() < 4.0 * (p * (1.0 - p) / n as f64).sqrt(),
                "shape {shape}: tail {tail} vs {p}"
            );
            if shape > 2.0 {
                let m = xs.iter().sum::<f64>() / n as f64;
                let sd = xm * (shape / ((shape - 1.0).powi(2) * (shape - 2.0))).sqrt();
                assert!((m - mean).abs() < 4.0 * sd / (n as f64).sqrt(), "mean {m}");
            }
        }
    }

    /// Web sessions: objects per page average the configured mean, object
    /// sizes keep the Pareto shape, sessions start inside their spread, and
    /// pages follow at the exponential mean inter-page time.
    #[test]
    fn web_sessions_follow_the_model() {
        let m = WebModel {
            sessions: 50,
            start_ns: 1_000_000_000,
            spread_ns: 10_000_000_000,
            pages_per_session: 400,
            inter_page_mean_ns: 2e9,
            objects_per_page_mean: 4.0,
            inter_object_mean_ns: 5e6,
            object_size_mean_bytes: 3000.0,
            object_size_shape: 1.2,
        };
        let objs = web_objects(&mut rng(7), &m, u64::MAX);
        // 50 sessions x 400 pages x 4 objects per page.
        let pages = 50.0 * 400.0;
        let per_page = objs.len() as f64 / pages;
        // Geometric with mean 4: variance (1-p)/p^2 = 12.
        assert!(
            (per_page - 4.0).abs() < 4.0 * (12.0 / pages).sqrt(),
            "objects per page {per_page}"
        );
        let xm = 3000.0 * 0.2 / 1.2;
        let mle = objs.len() as f64 / objs.iter().map(|o| (o.size_bytes / xm).ln()).sum::<f64>();
        assert!(
            (mle - 1.2).abs() < 4.0 * 1.2 / (objs.len() as f64).sqrt(),
            "shape MLE {mle}"
        );
        for s in 0..50 {
            let first = objs.iter().find(|o| o.session == s).unwrap().start_ns;
            assert!((1_000_000_000..11_000_000_000).contains(&first));
            let last = objs
                .iter()
                .filter(|o| o.session == s)
                .map(|o| o.start_ns)
                .max()
                .unwrap();
            // 399 inter-page gaps of mean 2 s: the session spans about 798 s.
            let span = (last - first) as f64 / 1e9;
            assert!(
                (span - 798.0).abs() < 4.0 * 2.0 * 399f64.sqrt() + 1.0,
                "session {s} spans {span}s"
            );
        }
        // Nothing at or after the end.
        let cut = web_objects(&mut rng(7), &m, 60_000_000_000);
        assert!(cut.iter().all(|o| o.start_ns < 60_000_000_000));
        assert!(cut.len() < objs.len());
    }
}
