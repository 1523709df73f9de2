//! Serde helpers that write floating-point numbers the way JavaScript's `JSON.stringify` does
//! for integral values (`0`, not `0.0`), so our JSON matches the TypeScript pi byte for byte.

use serde::Serializer;

/// Serializes an `f64` as an integer when it is integral and exactly representable.
pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        // Integral and within i64's exact range: `-0.0` also lands here and prints as `0`.
        serializer.serialize_i64(*value as i64)
    } else if value.is_finite() {
        serializer.serialize_f64(*value)
    } else {
        // JSON.stringify writes NaN and Infinity as null.
        serializer.serialize_none()
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize)]
    struct Wrap(#[serde(serialize_with = "super::serialize")] f64);

    #[test]
    fn integral_values_have_no_fraction() {
        assert_eq!(serde_json::to_string(&Wrap(0.0)).unwrap(), "0");
        assert_eq!(serde_json::to_string(&Wrap(-0.0)).unwrap(), "0");
        assert_eq!(serde_json::to_string(&Wrap(15.0)).unwrap(), "15");
        assert_eq!(serde_json::to_string(&Wrap(0.25)).unwrap(), "0.25");
        assert_eq!(serde_json::to_string(&Wrap(f64::NAN)).unwrap(), "null");
    }
}
