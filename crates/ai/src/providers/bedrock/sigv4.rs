//! AWS Signature Version 4 for request headers, as the AWS SDK for JavaScript signs
//! non-S3 requests: normalized, double-encoded path; sorted, strictly encoded query; trimmed
//! and sorted headers; HMAC-SHA256 key derivation from the secret and the credential scope.

use std::time::{SystemTime, UNIX_EPOCH};

use ring::{digest, hmac};

/// The signing algorithm's name.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// Headers the AWS SDK never signs (proxies may change them).
const UNSIGNABLE: &[&str] = &[
    "authorization",
    "cache-control",
    "connection",
    "expect",
    "from",
    "keep-alive",
    "max-forwards",
    "pragma",
    "referer",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "x-amzn-trace-id",
];

/// Lowercase hex of the SHA-256 of `data`.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, data).as_ref())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0F)]));
    }
    out
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    hmac::sign(&key, data).as_ref().to_vec()
}

/// `YYYYMMDD'T'HHMMSS'Z'` (the `x-amz-date` form) of a time.
pub fn amz_date(time: SystemTime) -> String {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// RFC 3986 encoding of everything but `A-Z a-z 0-9 - _ . ~` (and `/` unless `encode_slash`).
pub fn uri_encode(text: &str, encode_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (b == b'/' && !encode_slash)
        {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(hi) = char::from(bytes[i + 1]).to_digit(16)
            && let Some(lo) = char::from(bytes[i + 2]).to_digit(16)
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The canonical URI: `.`/`..` and empty segments removed, then every segment URI-encoded
/// (again, for a path that is already percent-encoded, as AWS requires outside S3).
pub fn canonical_uri(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    let mut normalized = String::from("/");
    normalized.push_str(&segments.join("/"));
    if !segments.is_empty() && path.ends_with('/') {
        normalized.push('/');
    }
    uri_encode(&normalized, false)
}

/// The canonical query string: pairs decoded, strictly re-encoded and sorted.
pub fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (
                uri_encode(&percent_decode(key), true),
                uri_encode(&percent_decode(value), true),
            )
        })
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// `(canonical headers block, signed header names)`: names lowercased, values trimmed with
/// inner runs of spaces collapsed, repeated names joined with commas, sorted by name.
pub fn canonical_headers(headers: &[(String, String)]) -> (String, String) {
    let mut merged: Vec<(String, String)> = Vec::new();
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        if UNSIGNABLE.contains(&name.as_str()) {
            continue;
        }
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        match merged.iter_mut().find(|(n, _)| *n == name) {
            Some((_, existing)) => {
                existing.push(',');
                existing.push_str(&value);
            }
            None => merged.push((name, value)),
        }
    }
    merged.sort_by(|a, b| a.0.cmp(&b.0));
    let block: String = merged.iter().map(|(n, v)| format!("{n}:{v}\n")).collect();
    let names = merged
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(";");
    (block, names)
}

/// Credentials and scope of one signature.
#[derive(Clone, Copy)]
pub struct SigningKey<'a> {
    pub access_key_id: &'a str,
    pub secret_access_key: &'a str,
    pub region: &'a str,
    pub service: &'a str,
}

impl std::fmt::Debug for SigningKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field("region", &self.region)
            .field("service", &self.service)
            .finish()
    }
}

/// Every intermediate of a signature, for checking against AWS's published vectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub canonical_request: String,
    pub string_to_sign: String,
    pub signed_headers: String,
    pub signature: String,
    /// The `Authorization` header value.
    pub authorization: String,
}

/// Signs a request. `headers` must already hold `host` and `x-amz-date` (and
/// `x-amz-security-token` with temporary credentials); `amz_date` is that date.
pub fn sign(
    key: &SigningKey<'_>,
    method: &str,
    path: &str,
    query: &str,
    headers: &[(String, String)],
    payload_hash: &str,
    amz_date: &str,
) -> Signature {
    let (header_block, signed_headers) = canonical_headers(headers);
    let canonical_request = format!(
        "{method}\n{}\n{}\n{header_block}\n{signed_headers}\n{payload_hash}",
        canonical_uri(path),
        canonical_query(query),
    );
    let date = amz_date.get(..8).unwrap_or(amz_date);
    let scope = format!("{date}/{}/{}/aws4_request", key.region, key.service);
    let string_to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        sha256_hex(canonical_request.as_bytes())
    );
    let mut signing = hmac_sha256(
        format!("AWS4{}", key.secret_access_key).as_bytes(),
        date.as_bytes(),
    );
    for part in [key.region, key.service, "aws4_request"] {
        signing = hmac_sha256(&signing, part.as_bytes());
    }
    let signature = hex(&hmac_sha256(&signing, string_to_sign.as_bytes()));
    let authorization = format!(
        "{ALGORITHM} Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
        key.access_key_id
    );
    Signature {
        canonical_request,
        string_to_sign,
        signed_headers,
        signature,
        authorization,
    }
}

#[cfg(test)]
mod tests {
    //! Vectors from AWS's SigV4 test suite (awslabs/aws-c-auth,
    //! tests/aws-signing-test-suite/v4): credentials AKIDEXAMPLE, region us-east-1,
    //! service `service`, 2015-08-30T12:36:00Z.
    use super::*;

    const DATE: &str = "20150830T123600Z";
    const EMPTY_HASH: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    const KEY: SigningKey<'static> = SigningKey {
        access_key_id: "AKIDEXAMPLE",
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        region: "us-east-1",
        service: "service",
    };

    fn headers(extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut all = vec![
            ("Host".to_owned(), "example.amazonaws.com".to_owned()),
            ("X-Amz-Date".to_owned(), DATE.to_owned()),
        ];
        all.extend(
            extra
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned())),
        );
        all
    }

    fn check(
        name: &str,
        method: &str,
        target: &str,
        extra: &[(&str, &str)],
        creq: &str,
        sig: &str,
    ) {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let signed = sign(&KEY, method, path, query, &headers(extra), EMPTY_HASH, DATE);
        assert_eq!(signed.canonical_request, creq, "{name}: canonical request");
        assert_eq!(signed.signature, sig, "{name}: signature");
    }

    #[test]
    fn get_vanilla() {
        let signed = sign(&KEY, "GET", "/", "", &headers(&[]), EMPTY_HASH, DATE);
        assert_eq!(
            signed.canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            signed.string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63"
        );
        assert_eq!(
            signed.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
    }

    #[test]
    fn published_vectors() {
        let plain = |path: &str, query: &str| {
            format!(
                "GET\n{path}\n{query}\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n{EMPTY_HASH}"
            )
        };
        check(
            "get-vanilla-query-order-key-case",
            "GET",
            "/?Param2=value2&Param1=value1",
            &[],
            &plain("/", "Param1=value1&Param2=value2"),
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
        );
        let unreserved = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        check(
            "get-vanilla-query-unreserved",
            "GET",
            &format!("/?{unreserved}={unreserved}"),
            &[],
            &plain("/", &format!("{unreserved}={unreserved}")),
            "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197",
        );
        check(
            "get-utf8",
            "GET",
            "/\u{1234}",
            &[],
            &plain("/%E1%88%B4", ""),
            "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85",
        );
        check(
            "get-space-normalized",
            "GET",
            "/example space/",
            &[],
            &plain("/example%20space/", ""),
            "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741",
        );
        for (name, path) in [
            ("get-slash-dot-slash-normalized", "/./"),
            (
                "get-relative-relative-normalized",
                "/example1/example2/../..",
            ),
        ] {
            check(
                name,
                "GET",
                path,
                &[],
                &plain("/", ""),
                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
            );
        }
        check(
            "get-header-value-trim",
            "GET",
            "/",
            &[("My-Header1", " value1"), ("My-Header2", " \"a   b   c\"")],
            &format!(
                "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\nx-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n{EMPTY_HASH}"
            ),
            "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
        );
        check(
            "get-header-key-duplicate",
            "GET",
            "/",
            &[
                ("My-Header1", "value2"),
                ("My-Header1", "value2"),
                ("My-Header1", "value1"),
            ],
            &format!(
                "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value2,value2,value1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n{EMPTY_HASH}"
            ),
            "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea",
        );
        check(
            "get-vanilla-with-session-token",
            "GET",
            "/",
            &[(
                "X-Amz-Security-Token",
                "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267",
            )],
            &format!(
                "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\nx-amz-security-token:6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267\n\nhost;x-amz-date;x-amz-security-token\n{EMPTY_HASH}"
            ),
            "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8",
        );
        let post = sign(&KEY, "POST", "/", "", &headers(&[]), EMPTY_HASH, DATE);
        assert_eq!(
            post.signature,
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
        );
    }

    #[test]
    fn post_with_signed_body() {
        // post-x-www-form-urlencoded: the body hash is both a header and the payload hash.
        let hash = sha256_hex(b"Param1=value1");
        assert_eq!(
            hash,
            "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e"
        );
        let extra = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Content-Length", "13"),
            ("X-Amz-Content-Sha256", hash.as_str()),
        ];
        let signed = sign(&KEY, "POST", "/", "", &headers(&extra), &hash, DATE);
        assert_eq!(
            signed.signed_headers,
            "content-length;content-type;host;x-amz-content-sha256;x-amz-date"
        );
        assert_eq!(
            signed.signature,
            "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b"
        );
    }

    #[test]
    fn sts_token_vector() {
        // post-sts-header-before.
        let token = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";
        let signed = sign(
            &KEY,
            "POST",
            "/",
            "",
            &headers(&[("X-Amz-Security-Token", token)]),
            EMPTY_HASH,
            DATE,
        );
        assert_eq!(
            signed.signature,
            "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"
        );
    }

    #[test]
    fn bedrock_model_ids_are_double_encoded_in_the_canonical_path() {
        let path = format!(
            "/model/{}/converse-stream",
            uri_encode("us.anthropic.claude-v1:0", true)
        );
        assert_eq!(path, "/model/us.anthropic.claude-v1%3A0/converse-stream");
        assert_eq!(
            canonical_uri(&path),
            "/model/us.anthropic.claude-v1%253A0/converse-stream"
        );
    }

    #[test]
    fn formats_amz_dates() {
        let at = UNIX_EPOCH + std::time::Duration::from_secs(1_440_938_160);
        assert_eq!(amz_date(at), DATE);
        let leap = UNIX_EPOCH + std::time::Duration::from_secs(951_782_400);
        assert_eq!(amz_date(leap), "20000229T000000Z");
    }
}
