//! Literal vectors made with OpenSSL (`openssl genrsa 1024`, `openssl pkeyutl -encrypt`), so
//! the padding and text format are checked against the implementation iperf3 links.

use super::*;

const PRIVATE_PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MIICdwIBADANBgkqhkiG9w0BAQEFAASCAmEwggJdAgEAAoGBAKjhYfCloBni3KgZ
c/fZj8R2lm3Ts9DZ2sy8dkAXxX1NucBYlu15zNWuxQL9M8ARRel5TJmOC1fuomDO
R98AGXYrn7oObA96sdCC1yjwgOutgEeu0bvXAfRO8Nu0IYPzQhsAWQ0Z71p/LbKj
dLNfdqKwKhQlAASMuU82OlQBG/4hAgMBAAECgYEAmQUO7zPDa3Epqo7Viz/win1B
NGZcSeL75ALnyo8/fJgOtQAQUUDJntxq2ph+aYu9Ix2rkH8qPBSXwMtoR+EZL4bX
d5rRihYzjME5RycqHgEaqCqMzCfLVT9nS0Wlo+DLcZEQIWK2oQGnQjht1+TIEqIe
zrSXDE9ILJ1Clds2GSECQQDUdiT9EDgMaOAWgS8ULTj+/UsnItYaAQwOU8qrdneH
cLV6FwBqOk/VDbks++8A/HXjOzziVXNArNqZt8FJJx9lAkEAy3zypruAEoeXlf91
tz8K/AEu6aBmirrkFbCwB9zEDbxvQbRk+2jXIy26MeHg0cXNZUwYKXBfc3eNNENg
avpuDQJALeHJwSDkicGISzPgv+G4QlDfDveV9w2s1ddAmGDAFW7AsjoPa+Fl5iPN
jqplhff/WXAsiNBdUGVD3Bhz1GFvhQJAaj0J0tMBwqrYEZAWPV3Etl1HyOHdp4B7
pHdi8Dfqg+FllMBCGKBb8hnlpDVx0xOacNCRrNDmhLpeFnM226Nz4QJBAMCpQ2ap
Sa4QfwWuZ9rfiuU5QWZriAGk2JPd6zrCg7NsfZ+gWt/2h7ko9XW0LyiFVYZtFG8p
cD7npN8rywaVUFM=
-----END PRIVATE KEY-----
";
const PRIVATE_PKCS1: &str = "-----BEGIN RSA PRIVATE KEY-----
MIICXQIBAAKBgQCo4WHwpaAZ4tyoGXP32Y/EdpZt07PQ2drMvHZAF8V9TbnAWJbt
eczVrsUC/TPAEUXpeUyZjgtX7qJgzkffABl2K5+6DmwPerHQgtco8IDrrYBHrtG7
1wH0TvDbtCGD80IbAFkNGe9afy2yo3SzX3aisCoUJQAEjLlPNjpUARv+IQIDAQAB
AoGBAJkFDu8zw2txKaqO1Ys/8Ip9QTRmXEni++QC58qPP3yYDrUAEFFAyZ7catqY
fmmLvSMdq5B/KjwUl8DLaEfhGS+G13ea0YoWM4zBOUcnKh4BGqgqjMwny1U/Z0tF
paPgy3GRECFitqEBp0I4bdfkyBKiHs60lwxPSCydQpXbNhkhAkEA1HYk/RA4DGjg
FoEvFC04/v1LJyLWGgEMDlPKq3Z3h3C1ehcAajpP1Q25LPvvAPx14zs84lVzQKza
mbfBSScfZQJBAMt88qa7gBKHl5X/dbc/CvwBLumgZoq65BWwsAfcxA28b0G0ZPto
1yMtujHh4NHFzWVMGClwX3N3jTRDYGr6bg0CQC3hycEg5InBiEsz4L/huEJQ3w73
lfcNrNXXQJhgwBVuwLI6D2vhZeYjzY6qZYX3/1lwLIjQXVBlQ9wYc9Rhb4UCQGo9
CdLTAcKq2BGQFj1dxLZdR8jh3aeAe6R3YvA36oPhZZTAQhigW/IZ5aQ1cdMTmnDQ
kazQ5oS6XhZzNtujc+ECQQDAqUNmqUmuEH8Frmfa34rlOUFma4gBpNiT3es6woOz
bH2foFrf9oe5KPV1tC8ohVWGbRRvKXA+56TfK8sGlVBT
-----END RSA PRIVATE KEY-----
";
const PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCo4WHwpaAZ4tyoGXP32Y/EdpZt
07PQ2drMvHZAF8V9TbnAWJbteczVrsUC/TPAEUXpeUyZjgtX7qJgzkffABl2K5+6
DmwPerHQgtco8IDrrYBHrtG71wH0TvDbtCGD80IbAFkNGe9afy2yo3SzX3aisCoU
JQAEjLlPNjpUARv+IQIDAQAB
-----END PUBLIC KEY-----
";
/// `user: mario\npwd:  rossi\nts:   1700000000`, OAEP (OpenSSL's default, SHA-1).
const TOKEN_OAEP: &str = "TXRG1WIGfPDHDFYd1HgLY/k5AkX4oZjDKTCTzIHYDsEFyyG32oTnVQlI+cXqEHUOLrWjVpOdeKi55UibC5ERMbkIt0U1CzBVQwe056ovyDdZuFeXDdKmix0ocj2HpLSiwcYnyuAiAcr45gIvJlJf54KK2ShOok+DfJJI0mesrTc=";
/// The same text with PKCS#1 v1.5 padding.
const TOKEN_PKCS1: &str = "XoCgyF5jgLf2614W+zoBg+I6OojZLxrzpyfZPWebMcaoTCxIWA9+2PPoLVgIX2ZexRRObtckX6G7Ut5shi1Pt+VNIaBj7m8XZswxycHuZaMaauFZerlaUH0AxgBmFF4oe+/gIawVJM+e4g50l62R95OfsRHT0fNHo0mwmX3Mquc=";
/// `mario,sha256("{mario}rossi")` (from `sha256sum`), between lines iperf3 skips.
const USERS: &str = "# comment,with comma\n\nnocomma\nmario,bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b\r\n";

fn keys() -> (PrivateKey, PublicKey) {
    (
        private_key_from_pem(PRIVATE_PKCS8).unwrap(),
        public_key_from_pem(PUBLIC).unwrap(),
    )
}

#[test]
fn openssl_tokens_decrypt_with_each_padding() {
    let (k, _) = keys();
    for (tok, pad) in [(TOKEN_OAEP, Padding::Oaep), (TOKEN_PKCS1, Padding::Pkcs1)] {
        let c = decode_token(&k, pad, tok).unwrap();
        assert_eq!(c.username, "mario");
        assert_eq!(c.password, "rossi");
        assert_eq!(c.timestamp, 1_700_000_000);
    }
    // The wrong padding is a refusal, not garbage credentials. (PKCS#1 v1.5 decryption
    // rejects implicitly: a bad block decrypts to random bytes, which fail the text format.)
    assert!(matches!(
        decode_token(&k, Padding::Pkcs1, TOKEN_OAEP),
        Err(AuthError::Decrypt(Padding::Pkcs1) | AuthError::Format)
    ));
    assert_eq!(
        decode_token(&k, Padding::Oaep, TOKEN_PKCS1),
        Err(AuthError::Decrypt(Padding::Oaep))
    );
}

#[test]
fn pkcs1_private_key_form_reads_too() {
    let k = private_key_from_pem(PRIVATE_PKCS1).unwrap();
    assert!(decode_token(&k, Padding::Oaep, TOKEN_OAEP).is_ok());
    assert!(matches!(
        private_key_from_pem(PUBLIC),
        Err(AuthError::Key { .. })
    ));
    assert!(matches!(
        public_key_from_pem("junk"),
        Err(AuthError::Key { .. })
    ));
}

#[test]
fn check_token_applies_skew_and_users_file() {
    let (k, _) = keys();
    let now = 1_700_000_000;
    assert_eq!(
        check_token(&k, Padding::Oaep, TOKEN_OAEP, USERS, now + 10, 10).unwrap(),
        "mario"
    );
    assert_eq!(
        check_token(&k, Padding::Oaep, TOKEN_OAEP, USERS, now - 10, 10).unwrap(),
        "mario"
    );
    assert_eq!(
        check_token(&k, Padding::Oaep, TOKEN_OAEP, USERS, now + 11, 10),
        Err(AuthError::Skew {
            user: "mario".into(),
            age: 11,
            skew: 10
        })
    );
    assert_eq!(
        check_token(&k, Padding::Oaep, TOKEN_OAEP, "mario,0000\n", now, 10),
        Err(AuthError::Denied("mario".into()))
    );
}

#[test]
fn round_trip_and_refusals() {
    let (k, p) = keys();
    for pad in [Padding::Oaep, Padding::Pkcs1] {
        let t = encode_token(&p, pad, "mario", "rossi", 42).unwrap();
        let c = decode_token(&k, pad, &t).unwrap();
        assert_eq!(
            (c.username.as_str(), c.password.as_str(), c.timestamp),
            ("mario", "rossi", 42)
        );
        // A wrong password decrypts but is not in the file.
        let t = encode_token(&p, pad, "mario", "bianchi", 42).unwrap();
        assert_eq!(
            check_token(&k, pad, &t, USERS, 42, 10),
            Err(AuthError::Denied("mario".into()))
        );
    }
    assert_eq!(
        encode_token(&p, Padding::Oaep, "ma rio", "x", 1),
        Err(AuthError::Blank)
    );
    let long = "x".repeat(100);
    assert!(matches!(
        encode_token(&p, Padding::Oaep, "mario", &long, 1),
        Err(AuthError::TooLong { bits: 1024, .. })
    ));
    assert_eq!(
        decode_token(&k, Padding::Oaep, "not base64!"),
        Err(AuthError::Base64)
    );
    assert_eq!(
        decode_token(&k, Padding::Oaep, &"A".repeat(MAX_TOKEN_LEN + 4)),
        Err(AuthError::TokenTooLong)
    );
}

#[test]
fn credentials_read_as_sscanf_does() {
    let c = parse_credentials(b"user: a\npwd:  b\nts:   -5").unwrap();
    assert_eq!(
        (c.username.as_str(), c.password.as_str(), c.timestamp),
        ("a", "b", -5)
    );
    // Blanks in the format match any run of blanks, or none.
    assert!(parse_credentials(b"user:a pwd:b ts:7").is_some());
    assert!(parse_credentials(b"user: a\npwd:  b\n").is_none());
    assert!(parse_credentials(b"usr: a\npwd:  b\nts:   1").is_none());
    assert!(parse_credentials(b"user: a\npwd:  b\nts:   x").is_none());
    assert!(parse_credentials(b"").is_none());
    assert_eq!(credentials_text("a", "b", 3), "user: a\npwd:  b\nts:   3");
}

#[test]
fn users_file_format() {
    assert_eq!(
        password_hash("mario", "rossi"),
        "bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b"
    );
    assert!(users_file_allows(USERS, "mario", "rossi"));
    assert!(!users_file_allows(USERS, "mario", "rossi2"));
    assert!(!users_file_allows(USERS, "luigi", "rossi"));
    // strtok: leading and doubled commas vanish; extra fields are ignored.
    let h = password_hash("mario", "rossi");
    assert!(users_file_allows(
        &format!(",mario,,{h},extra"),
        "mario",
        "rossi"
    ));
    assert!(!users_file_allows(&format!("#mario,{h}"), "mario", "rossi"));
    assert!(!users_file_allows("mario,", "mario", "rossi"));
}

#[test]
fn debug_never_shows_the_password() {
    let c = parse_credentials(b"user: a\npwd:  secret\nts:   1").unwrap();
    assert!(!format!("{c:?}").contains("secret"));
}

/// Peer input never panics: random bytes as decrypted text, users files and tokens (random
/// base64 of the key's block size reaches the RSA decryption itself).
#[test]
fn random_input_is_refused_without_panic() {
    use base64::Engine as _;
    let (k, _) = keys();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let alphabet = b"user:pwd ts\n\r,#-+0123456789abc\0\xff";
    for _ in 0..2000 {
        let len = (next() % 64) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let _ = parse_credentials(&bytes);
        let _ = users_file_allows(&String::from_utf8_lossy(&bytes), "mario", "rossi");
    }
    for _ in 0..20 {
        let block: Vec<u8> = (0..128).map(|_| next() as u8).collect();
        let token = base64::engine::general_purpose::STANDARD.encode(block);
        for pad in [Padding::Oaep, Padding::Pkcs1] {
            assert!(check_token(&k, pad, &token, USERS, 0, 10).is_err());
        }
    }
}
