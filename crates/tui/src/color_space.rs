//! Perceptual color spaces for generated themes: OKLab, its polar form OKLCH, and OKHSL
//! (Björn Ottosson's hue/saturation/lightness over OKLab, with saturation relative to the
//! sRGB gamut). Hues are in degrees; lightness, saturation and chroma as in the papers.

use std::f64::consts::PI;

/// An sRGB color with channels 0-255.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgb {
    pub r: u8,
    pub g: u8,
    pub b: u8,
}

impl Rgb {
    pub const fn new(r: u8, g: u8, b: u8) -> Self {
        Rgb { r, g, b }
    }

    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }
}

/// OKLCH: OKLab lightness, chroma and hue (degrees).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Oklch {
    pub l: f64,
    pub c: f64,
    pub h: f64,
}

/// OKHSL: hue (degrees), saturation and lightness, each 0-1 but the hue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Okhsl {
    pub h: f64,
    pub s: f64,
    pub l: f64,
}

fn to_linear(channel: u8) -> f64 {
    let v = f64::from(channel) / 255.0;
    if v <= 0.04045 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

fn from_linear(v: f64) -> f64 {
    if v <= 0.003_130_8 {
        12.92 * v
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    }
}

fn channel(v: f64) -> u8 {
    // Clamped to the gamut, so the cast cannot overflow.
    (from_linear(v).clamp(0.0, 1.0) * 255.0).round() as u8
}

/// OKLab `(L, a, b)` of an sRGB color.
pub fn rgb_to_oklab(rgb: Rgb) -> (f64, f64, f64) {
    let (r, g, b) = (to_linear(rgb.r), to_linear(rgb.g), to_linear(rgb.b));
    let l = 0.412_221_470_8 * r + 0.536_332_536_3 * g + 0.051_445_992_9 * b;
    let m = 0.211_903_498_2 * r + 0.680_699_545_1 * g + 0.107_396_956_6 * b;
    let s = 0.088_302_461_9 * r + 0.281_718_837_6 * g + 0.629_978_700_5 * b;
    let (l, m, s) = (l.cbrt(), m.cbrt(), s.cbrt());
    (
        0.210_454_255_3 * l + 0.793_617_785 * m - 0.004_072_046_8 * s,
        1.977_998_495_1 * l - 2.428_592_205 * m + 0.450_593_709_9 * s,
        0.025_904_037_1 * l + 0.782_771_766_2 * m - 0.808_675_766 * s,
    )
}

/// Linear sRGB of an OKLab color (may lie outside 0-1).
fn oklab_to_linear(l: f64, a: f64, b: f64) -> (f64, f64, f64) {
    let l_ = l + 0.396_337_777_4 * a + 0.215_803_757_3 * b;
    let m_ = l - 0.105_561_345_8 * a - 0.063_854_172_8 * b;
    let s_ = l - 0.089_484_177_5 * a - 1.291_485_548 * b;
    let (l, m, s) = (l_ * l_ * l_, m_ * m_ * m_, s_ * s_ * s_);
    (
        4.076_741_662_1 * l - 3.307_711_591_3 * m + 0.230_969_929_2 * s,
        -1.268_438_004_6 * l + 2.609_757_401_1 * m - 0.341_319_396_5 * s,
        -0.004_196_086_3 * l - 0.703_418_614_7 * m + 1.707_614_701 * s,
    )
}

/// The sRGB color of an OKLab color, clipped to the gamut.
pub fn oklab_to_rgb(l: f64, a: f64, b: f64) -> Rgb {
    let (r, g, b) = oklab_to_linear(l, a, b);
    Rgb::new(channel(r), channel(g), channel(b))
}

/// OKLCH of an sRGB color.
pub fn rgb_to_oklch(rgb: Rgb) -> Oklch {
    let (l, a, b) = rgb_to_oklab(rgb);
    let c = (a * a + b * b).sqrt();
    let h = if c < 1e-9 {
        0.0
    } else {
        b.atan2(a).to_degrees().rem_euclid(360.0)
    };
    Oklch { l, c, h }
}

/// The sRGB color of an OKLCH color; outside the gamut the chroma is reduced (hue and
/// lightness kept) until it fits, as pi does.
pub fn oklch_to_rgb(color: Oklch) -> Rgb {
    let h = color.h.to_radians();
    let at = |chroma: f64| oklab_to_linear(color.l, chroma * h.cos(), chroma * h.sin());
    let in_gamut =
        |(r, g, b): (f64, f64, f64)| [r, g, b].iter().all(|c| (-1e-7..=1.0 + 1e-7).contains(c));
    let to_rgb = |(r, g, b): (f64, f64, f64)| Rgb::new(channel(r), channel(g), channel(b));
    let direct = at(color.c);
    if in_gamut(direct) {
        return to_rgb(direct);
    }
    let (mut low, mut high) = (0.0, color.c);
    let mut linear = at(0.0);
    for _ in 0..20 {
        let chroma = (low + high) / 2.0;
        let candidate = at(chroma);
        if in_gamut(candidate) {
            low = chroma;
            linear = candidate;
        } else {
            high = chroma;
        }
    }
    to_rgb(linear)
}

/// A CSS-like color function of pi's theme files: `oklch(L[%] C H[deg])` or
/// `okhsl(H[deg] S[%] L[%])`; `None` when `text` is neither or out of range.
pub fn parse_color_function(text: &str) -> Option<Rgb> {
    let lower = text.trim().to_ascii_lowercase();
    let (name, rest) = lower.split_once('(')?;
    let body = rest.strip_suffix(')')?;
    let parts: Vec<&str> = body.split_whitespace().collect();
    let [a, b, c] = parts.as_slice() else {
        return None;
    };
    let number = |t: &str| -> Option<(f64, bool)> {
        let (digits, percent) = match t.strip_suffix('%') {
            Some(d) => (d, true),
            None => (t, false),
        };
        let value: f64 = digits.parse().ok()?;
        value.is_finite().then_some((value, percent))
    };
    let scaled = |(value, percent): (f64, bool)| if percent { value / 100.0 } else { value };
    let degrees = |t: &str| -> Option<f64> {
        let value: f64 = t.strip_suffix("deg").unwrap_or(t).parse().ok()?;
        value.is_finite().then_some(value)
    };
    match name.trim() {
        "oklch" => {
            let l = scaled(number(a)?);
            let chroma = b
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)?;
            let h = degrees(c)?;
            (0.0..=1.0)
                .contains(&l)
                .then(|| oklch_to_rgb(Oklch { l, c: chroma, h }))
        }
        "okhsl" => {
            let h = degrees(a)?;
            let s = scaled(number(b)?);
            let l = scaled(number(c)?);
            ((0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&l)).then(|| {
                okhsl_to_rgb(Okhsl {
                    h: h.rem_euclid(360.0),
                    s,
                    l,
                })
            })
        }
        _ => None,
    }
}

const K1: f64 = 0.206;
const K2: f64 = 0.03;
const K3: f64 = (1.0 + K1) / (1.0 + K2);

/// OKHSL lightness of an OKLab lightness (Ottosson's toe).
pub fn toe(x: f64) -> f64 {
    0.5 * (K3 * x - K1 + ((K3 * x - K1) * (K3 * x - K1) + 4.0 * K2 * K3 * x).sqrt())
}

/// OKLab lightness of an OKHSL lightness.
pub fn toe_inv(x: f64) -> f64 {
    (x * x + K1 * x) / (K3 * (x + K2))
}

/// The largest saturation `C / L` inside the gamut for the hue `(a, b)` (unit vector).
fn max_saturation(a: f64, b: f64) -> f64 {
    let (k, w) = if -1.881_703_28 * a - 0.809_364_93 * b > 1.0 {
        (
            [
                1.190_862_77,
                1.765_767_28,
                0.596_626_41,
                0.755_151_97,
                0.567_712_45,
            ],
            [4.076_741_662_1, -3.307_711_591_3, 0.230_969_929_2],
        )
    } else if 1.814_441_04 * a - 1.194_452_76 * b > 1.0 {
        (
            [
                0.739_565_15,
                -0.459_544_04,
                0.082_854_27,
                0.125_410_7,
                0.145_032_04,
            ],
            [-1.268_438_004_6, 2.609_757_401_1, -0.341_319_396_5],
        )
    } else {
        (
            [
                1.357_336_52,
                -0.009_157_99,
                -1.151_302_1,
                -0.505_596_06,
                0.006_921_67,
            ],
            [-0.004_196_086_3, -0.703_418_614_7, 1.707_614_701],
        )
    };
    let mut s = k[0] + k[1] * a + k[2] * b + k[3] * a * a + k[4] * a * b;
    let k_l = 0.396_337_777_4 * a + 0.215_803_757_3 * b;
    let k_m = -0.105_561_345_8 * a - 0.063_854_172_8 * b;
    let k_s = -0.089_484_177_5 * a - 1.291_485_548 * b;
    let (l_, m_, s_) = (1.0 + s * k_l, 1.0 + s * k_m, 1.0 + s * k_s);
    let (l, m, s3) = (l_ * l_ * l_, m_ * m_ * m_, s_ * s_ * s_);
    let (l_ds, m_ds, s_ds) = (
        3.0 * k_l * l_ * l_,
        3.0 * k_m * m_ * m_,
        3.0 * k_s * s_ * s_,
    );
    let (l_ds2, m_ds2, s_ds2) = (
        6.0 * k_l * k_l * l_,
        6.0 * k_m * k_m * m_,
        6.0 * k_s * k_s * s_,
    );
    let f = w[0] * l + w[1] * m + w[2] * s3;
    let f1 = w[0] * l_ds + w[1] * m_ds + w[2] * s_ds;
    let f2 = w[0] * l_ds2 + w[1] * m_ds2 + w[2] * s_ds2;
    s -= f * f1 / (f1 * f1 - 0.5 * f * f2);
    s
}

/// The lightness and chroma of the gamut's cusp for the hue `(a, b)`.
fn find_cusp(a: f64, b: f64) -> (f64, f64) {
    let s_cusp = max_saturation(a, b);
    let (r, g, bl) = oklab_to_linear(1.0, s_cusp * a, s_cusp * b);
    let l_cusp = (1.0 / r.max(g).max(bl)).cbrt();
    (l_cusp, l_cusp * s_cusp)
}

/// Where the line from `(L0, 0)` to `(L1, C1)` leaves the gamut, as a fraction of it.
fn gamut_intersection(a: f64, b: f64, l1: f64, c1: f64, l0: f64, cusp: (f64, f64)) -> f64 {
    let (cusp_l, cusp_c) = cusp;
    if ((l1 - l0) * cusp_c - (cusp_l - l0) * c1) <= 0.0 {
        return cusp_c * l0 / (c1 * cusp_l + cusp_c * (l0 - l1));
    }
    let mut t = cusp_c * (l0 - 1.0) / (c1 * (cusp_l - 1.0) + cusp_c * (l0 - l1));
    let dl = l1 - l0;
    let dc = c1;
    let k_l = 0.396_337_777_4 * a + 0.215_803_757_3 * b;
    let k_m = -0.105_561_345_8 * a - 0.063_854_172_8 * b;
    let k_s = -0.089_484_177_5 * a - 1.291_485_548 * b;
    let (l_dt, m_dt, s_dt) = (dl + dc * k_l, dl + dc * k_m, dl + dc * k_s);
    let l = l0 * (1.0 - t) + t * l1;
    let c = t * c1;
    let (l_, m_, s_) = (l + c * k_l, l + c * k_m, l + c * k_s);
    let (ll, mm, ss) = (l_ * l_ * l_, m_ * m_ * m_, s_ * s_ * s_);
    let (ldt, mdt, sdt) = (
        3.0 * l_dt * l_ * l_,
        3.0 * m_dt * m_ * m_,
        3.0 * s_dt * s_ * s_,
    );
    let (ldt2, mdt2, sdt2) = (
        6.0 * l_dt * l_dt * l_,
        6.0 * m_dt * m_dt * m_,
        6.0 * s_dt * s_dt * s_,
    );
    let step = |w: [f64; 3]| {
        let f = w[0] * ll + w[1] * mm + w[2] * ss - 1.0;
        let f1 = w[0] * ldt + w[1] * mdt + w[2] * sdt;
        let f2 = w[0] * ldt2 + w[1] * mdt2 + w[2] * sdt2;
        let u = f1 / (f1 * f1 - 0.5 * f * f2);
        if u >= 0.0 { -f * u } else { f64::MAX }
    };
    let t_r = step([4.076_741_662_1, -3.307_711_591_3, 0.230_969_929_2]);
    let t_g = step([-1.268_438_004_6, 2.609_757_401_1, -0.341_319_396_5]);
    let t_b = step([-0.004_196_086_3, -0.703_418_614_7, 1.707_614_701]);
    t += t_r.min(t_g).min(t_b);
    t
}

/// The chroma OKHSL maps saturation 0.8 and 1.0 to (plus the hue-independent `C_0`).
fn chroma_scale(l: f64, a: f64, b: f64) -> (f64, f64, f64) {
    let cusp = find_cusp(a, b);
    let c_max = gamut_intersection(a, b, l, 1.0, l, cusp);
    let (st_max_s, st_max_t) = (cusp.1 / cusp.0, cusp.1 / (1.0 - cusp.0));
    let k = c_max / (l * st_max_s).min((1.0 - l) * st_max_t);
    let st_mid_s = 0.115_169_93
        + 1.0
            / (7.447_789_7
                + 4.159_012_4 * b
                + a * (-2.195_573_47
                    + 1.751_984_01 * b
                    + a * (-2.137_049_48 - 10.023_010_43 * b
                        + a * (-4.248_945_61 + 5.387_708_19 * b + 4.698_910_13 * a))));
    let st_mid_t = 0.112_396_42
        + 1.0
            / (1.613_203_2 - 0.681_243_79 * b
                + a * (0.403_706_12
                    + 0.901_481_23 * b
                    + a * (-0.270_879_43
                        + 0.612_239_9 * b
                        + a * (0.002_992_15 - 0.453_995_68 * b - 0.146_618_72 * a))));
    let (ca, cb) = (l * st_mid_s, (1.0 - l) * st_mid_t);
    let c_mid = 0.9 * k * (1.0 / (1.0 / ca.powi(4) + 1.0 / cb.powi(4))).sqrt().sqrt();
    let (ca, cb) = (l * 0.4, (1.0 - l) * 0.8);
    let c_0 = (1.0 / (1.0 / (ca * ca) + 1.0 / (cb * cb))).sqrt();
    (c_0, c_mid, c_max)
}

/// The sRGB color of an OKHSL color.
pub fn okhsl_to_rgb(color: Okhsl) -> Rgb {
    let Okhsl { h, s, l } = color;
    if l >= 1.0 {
        return Rgb::new(255, 255, 255);
    }
    if l <= 0.0 {
        return Rgb::new(0, 0, 0);
    }
    let turns = h / 360.0;
    let (a_, b_) = ((2.0 * PI * turns).cos(), (2.0 * PI * turns).sin());
    let lab_l = toe_inv(l);
    let (c_0, c_mid, c_max) = chroma_scale(lab_l, a_, b_);
    let (mid, mid_inv) = (0.8, 1.25);
    let c = if s < mid {
        let t = mid_inv * s;
        let k_1 = mid * c_0;
        let k_2 = 1.0 - k_1 / c_mid;
        t * k_1 / (1.0 - k_2 * t)
    } else {
        let t = (s - mid) / (1.0 - mid);
        let k_0 = c_mid;
        let k_1 = (1.0 - mid) * c_mid * c_mid * mid_inv * mid_inv / c_0;
        let k_2 = 1.0 - k_1 / (c_max - c_mid);
        k_0 + t * k_1 / (1.0 - k_2 * t)
    };
    oklab_to_rgb(lab_l, c * a_, c * b_)
}

/// OKHSL of an sRGB color (grays have hue 0 and saturation 0).
pub fn rgb_to_okhsl(rgb: Rgb) -> Okhsl {
    let (lab_l, a, b) = rgb_to_oklab(rgb);
    let l = toe(lab_l);
    let c = (a * a + b * b).sqrt();
    if c < 1e-9 || lab_l <= 0.0 || lab_l >= 1.0 {
        return Okhsl { h: 0.0, s: 0.0, l };
    }
    let (a_, b_) = (a / c, b / c);
    let h = (0.5 + 0.5 * (-b).atan2(-a) / PI) * 360.0;
    let (c_0, c_mid, c_max) = chroma_scale(lab_l, a_, b_);
    let (mid, mid_inv) = (0.8, 1.25);
    let s = if c < c_mid {
        let k_1 = mid * c_0;
        let k_2 = 1.0 - k_1 / c_mid;
        let t = c / (k_1 + k_2 * c);
        t * mid
    } else {
        let k_0 = c_mid;
        let k_1 = (1.0 - mid) * c_mid * c_mid * mid_inv * mid_inv / c_0;
        let k_2 = 1.0 - k_1 / (c_max - c_mid);
        let t = (c - k_0) / (k_1 + k_2 * (c - k_0));
        mid + (1.0 - mid) * t
    };
    Okhsl { h, s, l }
}

/// The OKHSL lightness of an OKLab lightness.
pub fn oklab_to_okhsl_lightness(l: f64) -> f64 {
    toe(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oklab_of_white_and_black() {
        let (l, a, b) = rgb_to_oklab(Rgb::new(255, 255, 255));
        assert!((l - 1.0).abs() < 1e-4 && a.abs() < 1e-4 && b.abs() < 1e-4);
        assert!(rgb_to_oklab(Rgb::new(0, 0, 0)).0.abs() < 1e-9);
    }

    #[test]
    fn okhsl_round_trips() {
        for rgb in [
            Rgb::new(0xf4, 0xb8, 0xe4),
            Rgb::new(200, 30, 40),
            Rgb::new(20, 120, 250),
            Rgb::new(128, 128, 128),
            Rgb::new(10, 200, 90),
        ] {
            let back = okhsl_to_rgb(rgb_to_okhsl(rgb));
            let close = |x: u8, y: u8| x.abs_diff(y) <= 1;
            assert!(
                close(back.r, rgb.r) && close(back.g, rgb.g) && close(back.b, rgb.b),
                "{rgb:?} -> {back:?}"
            );
        }
    }

    #[test]
    fn oklch_round_trips_and_hue_is_in_degrees() {
        let red = rgb_to_oklch(Rgb::new(255, 0, 0));
        assert!((red.l - 0.628).abs() < 0.001, "{red:?}");
        assert!((red.h - 29.23).abs() < 0.1, "{red:?}");
        assert_eq!(oklch_to_rgb(red), Rgb::new(255, 0, 0));
        assert_eq!(rgb_to_okhsl(Rgb::new(255, 0, 0)).s.round(), 1.0);
    }

    #[test]
    fn theme_color_functions_parse() {
        assert_eq!(
            parse_color_function("okhsl(0 0% 100%)"),
            Some(Rgb::new(255, 255, 255))
        );
        assert_eq!(
            parse_color_function("OKLCH(62.8% 0.2577 29.23deg)"),
            Some(Rgb::new(255, 0, 0))
        );
        // Out of gamut: chroma is reduced, lightness kept.
        let vivid = parse_color_function("oklch(0.9 0.4 140)").unwrap();
        assert!(vivid.g > vivid.r && vivid.g > vivid.b, "{vivid:?}");
        assert_eq!(parse_color_function("okhsl(10 120% 50%)"), None);
        assert_eq!(parse_color_function("hsl(10 50% 50%)"), None);
        assert_eq!(parse_color_function("okhsl(10 50%)"), None);
    }

    #[test]
    fn toe_inverts() {
        for x in [0.1, 0.5, 0.9] {
            assert!((toe_inv(toe(x)) - x).abs() < 1e-9);
        }
    }
}
