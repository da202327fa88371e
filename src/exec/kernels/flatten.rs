//! `flatten`'s result shape, with Paddle's semantics: dimensions `start_axis..=stop_axis`
//! (negative axes count from the end) become one; a 0-d input becomes `[1]`. The op itself is a
//! reshape of the same buffer, and `flatten_grad` reshapes the gradient back to `x`'s shape.

use crate::exec::error::KResult;
use crate::kbail;

/// The shape `flatten(x) {start_axis, stop_axis}` gives `x_shape`.
pub fn flatten_shape(x_shape: &[usize], start_axis: i64, stop_axis: i64) -> KResult<Vec<usize>> {
    let r = x_shape.len() as i64;
    if r == 0 {
        return Ok(vec![1]);
    }
    let norm = |a: i64| if a < 0 { a + r } else { a };
    let (s, e) = (norm(start_axis), norm(stop_axis));
    if s < 0 || e >= r || s > e {
        kbail!(
            "flatten: start_axis {} and stop_axis {} do not name a range of the {} dimensions of {:?}",
            start_axis,
            stop_axis,
            r,
            x_shape
        );
    }
    let (s, e) = (s as usize, e as usize);
    let mut out = x_shape[..s].to_vec();
    out.push(x_shape[s..=e].iter().product());
    out.extend_from_slice(&x_shape[e + 1..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes() {
        assert_eq!(flatten_shape(&[8, 16, 5, 5], 1, 3).unwrap(), vec![8, 400]);
        assert_eq!(flatten_shape(&[8, 16, 5, 5], 0, -1).unwrap(), vec![3200]);
        assert_eq!(flatten_shape(&[2, 3, 4], -2, -2).unwrap(), vec![2, 3, 4]);
        assert_eq!(flatten_shape(&[], 0, 0).unwrap(), vec![1]);
        assert!(flatten_shape(&[2, 3], 1, 0).is_err());
        assert!(flatten_shape(&[2, 3], 0, 2).is_err());
    }
}
