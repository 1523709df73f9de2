use super::*;

const CELL: CellDimensions = CellDimensions {
    width_px: 9,
    height_px: 18,
};

fn dims(width_px: u32, height_px: u32) -> ImageDimensions {
    ImageDimensions {
        width_px,
        height_px,
    }
}

/// Cell sizes as pi 1.6.0's `calculateImageCellSize` gives them (values taken from it).
#[test]
fn cell_sizes_match_pi() {
    let cases = [
        (800, 600, 60, Some(30), CELL, false, (60, 23)),
        (100, 1000, 60, Some(30), CELL, true, (6, 30)),
        (10, 10, 60, Some(30), CELL, false, (60, 30)),
        (300, 50, 40, Some(20), CELL, false, (40, 4)),
        (300, 50, 40, Some(20), CELL, true, (40, 3)),
        (
            640,
            480,
            58,
            None,
            CellDimensions {
                width_px: 8,
                height_px: 16,
            },
            true,
            (58, 22),
        ),
        (
            1920,
            1080,
            60,
            Some(30),
            CellDimensions {
                width_px: 10,
                height_px: 20,
            },
            true,
            (60, 17),
        ),
    ];
    for (w, h, mw, mh, cell, optimize, want) in cases {
        assert_eq!(
            image_cell_size(dims(w, h), mw, mh, cell, optimize),
            want,
            "{w}x{h} in {mw}x{mh:?}"
        );
    }
}

#[test]
fn kitty_sequences_are_chunked_as_pi_chunks_them() {
    let options = KittyOptions {
        columns: Some(3),
        rows: Some(2),
        image_id: Some(7),
        keep_cursor: true,
    };
    assert_eq!(
        encode_kitty("QUJD", options),
        "\x1b_Ga=T,f=100,q=2,C=1,c=3,r=2,i=7;QUJD\x1b\\"
    );
    let big = "A".repeat(9000);
    let encoded = encode_kitty(&big, options);
    assert_eq!(encoded.len(), 9057);
    assert!(encoded.starts_with("\x1b_Ga=T,f=100,q=2,C=1,c=3,r=2,i=7,m=1;AAA"));
    assert_eq!(encoded.matches("\x1b_Gm=1;").count(), 1);
    assert_eq!(encoded.matches("\x1b_Gm=0;").count(), 1);
    assert!(encoded.ends_with("AAA\x1b\\"));
}

#[test]
fn iterm2_names_the_decoded_size() {
    assert_eq!(
        encode_iterm2("QUJDRA==", 5),
        "\x1b]1337;File=inline=1;size=4;width=5;height=auto:QUJDRA==\x07"
    );
}

#[test]
fn dimensions_come_from_the_headers() {
    // A 3x2 PNG header (signature, IHDR length and type, width, height).
    let mut png = vec![137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13];
    png.extend(b"IHDR");
    png.extend(3u32.to_be_bytes());
    png.extend(2u32.to_be_bytes());
    png.extend([8, 6, 0, 0, 0]);
    let png = STANDARD.encode(png);
    assert_eq!(image_dimensions(&png, "image/png"), Some(dims(3, 2)));
    assert_eq!(image_dimensions(&png, "image/gif"), None);
    let mut gif = b"GIF89a".to_vec();
    gif.extend([5, 0, 4, 0, 0, 0]);
    assert_eq!(
        image_dimensions(&STANDARD.encode(gif), "image/gif"),
        Some(dims(5, 4))
    );
    assert_eq!(image_dimensions("not base64!", "image/png"), None);
}

#[test]
fn cell_size_reports_are_parsed() {
    assert_eq!(
        parse_cell_size_response("\x1b[6;20;10t"),
        Some(Some(CellDimensions {
            width_px: 10,
            height_px: 20
        }))
    );
    assert_eq!(parse_cell_size_response("\x1b[6;0;10t"), Some(None));
    assert_eq!(parse_cell_size_response("\x1b[8;20;10t"), None);
}

#[test]
fn fallback_names_type_and_size() {
    assert_eq!(
        image_fallback("image/png", Some(dims(3, 2)), None),
        "[Image: [image/png] 3x2]"
    );
    assert_eq!(
        image_fallback("image/unknown", None, Some("shot.png")),
        "[Image: shot.png [image/unknown]]"
    );
}

#[test]
fn a_cut_kitty_image_shows_the_rows_left() {
    register_kitty_image(
        4242,
        KittyImage {
            columns: 10,
            rows: 4,
            dimensions: dims(90, 72),
        },
    );
    let line = format!(
        "  {}",
        encode_kitty(
            "QUJD",
            KittyOptions {
                columns: Some(10),
                rows: Some(4),
                image_id: Some(4242),
                keep_cursor: true,
            },
        )
    );
    assert_eq!(
        crop_kitty_line(&line, 1, 2),
        "  \x1b_Ga=T,f=100,q=2,C=1,c=10,i=4242,y=18,h=36,r=2;QUJD\x1b\\"
    );
    assert_eq!(crop_kitty_line(&line, 0, 9), line);
}

#[test]
fn images_under_an_overlay_are_hidden() {
    register_kitty_image(
        4343,
        KittyImage {
            columns: 4,
            rows: 3,
            dimensions: dims(36, 54),
        },
    );
    let kitty = format!(
        "ab{}cd",
        encode_kitty(
            "QUJD",
            KittyOptions {
                columns: Some(4),
                rows: Some(3),
                image_id: Some(4343),
                keep_cursor: true,
            },
        )
    );
    assert_eq!(strip_image_sequences(&kitty), "abcd");
    let iterm = format!("x\x1b[2A{}y", encode_iterm2("QUJD", 5));
    assert_eq!(strip_image_sequences(&iterm), "xy");

    // The Kitty image spans rows 0-2, columns 2-5; the iTerm2 one rows 3-5, columns 1-5.
    let mut lines = vec![
        kitty.clone(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        iterm.clone(),
    ];
    hide_images_under(&mut lines, 2..3, 10..20);
    assert_eq!(lines[0], kitty, "beside the overlay");
    hide_images_under(&mut lines, 2..3, 3..4);
    assert_eq!(lines[0], "abcd");
    assert_eq!(lines[5], iterm);
    hide_images_under(&mut lines, 3..4, 0..2);
    assert_eq!(lines[5], "xy");
}
