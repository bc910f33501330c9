//! HTTP/1.x: the method, target and Host of a stream's first request, the status of its
//! first response.

/// Why an HTTP/1.x message could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The bytes end before the request or status line, or the headers, do.
    #[error("the HTTP message is incomplete")]
    Incomplete,
    /// The stream does not start with an HTTP/1.x request line or status line.
    #[error("not HTTP/1.x")]
    NotHttp,
}

/// The first request of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpRequest {
    /// The method (`GET`, `POST`...).
    pub method: String,
    /// The request target as sent (`/index.html`).
    pub path: String,
    /// The `Host` header's value, if there is one.
    pub host: Option<String>,
    /// The minor version (`HTTP/1.0` is 0, `HTTP/1.1` is 1).
    pub minor_version: u8,
}

/// The first response of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The minor version.
    pub minor_version: u8,
}

fn version(v: &[u8]) -> Option<u8> {
    match v {
        b"HTTP/1.0" => Some(0),
        b"HTTP/1.1" => Some(1),
        _ => None,
    }
}

/// The line at the start of `b` without its CRLF (or LF), and the rest.
fn line(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let i = b.iter().position(|&c| c == b'\n')?;
    let l = &b[..i];
    Some((l.strip_suffix(b"\r").unwrap_or(l), &b[i + 1..]))
}

use super::text::text;

impl HttpRequest {
    /// The request at the start of `stream`: request line and headers, up to the empty line.
    pub fn parse(stream: &[u8]) -> Result<HttpRequest, HttpError> {
        // Decide early whether this looks like a request at all.
        let sp = stream.iter().take(17).position(|&c| c == b' ');
        let method_ok =
            |m: &[u8]| !m.is_empty() && m.iter().all(|c| c.is_ascii_uppercase() || *c == b'-');
        match sp {
            Some(i) if method_ok(&stream[..i]) => {}
            None if stream.len() < 17 && (stream.is_empty() || method_ok(stream)) => {
                return Err(HttpError::Incomplete)
            }
            _ => return Err(HttpError::NotHttp),
        }
        let (first, mut rest) = line(stream).ok_or(HttpError::Incomplete)?;
        let mut parts = first.split(|&c| c == b' ');
        let (Some(method), Some(path), Some(v), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(HttpError::NotHttp);
        };
        let minor_version = version(v).ok_or(HttpError::NotHttp)?;
        let mut host = None;
        loop {
            let (h, r) = line(rest).ok_or(HttpError::Incomplete)?;
            rest = r;
            if h.is_empty() {
                break;
            }
            if let Some(colon) = h.iter().position(|&c| c == b':') {
                if host.is_none() && h[..colon].eq_ignore_ascii_case(b"host") {
                    host = Some(super::text::host(h[colon + 1..].trim_ascii()));
                }
            }
        }
        Ok(HttpRequest {
            method: text(method),
            path: text(path),
            host,
            minor_version,
        })
    }
}

impl HttpResponse {
    /// The status line at the start of `stream`.
    pub fn parse(stream: &[u8]) -> Result<HttpResponse, HttpError> {
        let head = &stream[..stream.len().min(8)];
        if !b"HTTP/1.".starts_with(&head[..head.len().min(7)]) {
            return Err(HttpError::NotHttp);
        }
        if stream.len() < 12 {
            return Err(HttpError::Incomplete);
        }
        let minor_version = version(&stream[..8]).ok_or(HttpError::NotHttp)?;
        let code = &stream[9..12];
        if stream[8] != b' ' || !code.iter().all(u8::is_ascii_digit) {
            return Err(HttpError::NotHttp);
        }
        let status = code.iter().fold(0u16, |a, d| a * 10 + u16::from(d - b'0'));
        Ok(HttpResponse {
            status,
            minor_version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_and_response() {
        let r = b"GET /a?b=c HTTP/1.1\r\nUser-Agent: x\r\nhost:  example.net:8080 \r\n\r\nbody";
        let q = HttpRequest::parse(r).unwrap();
        assert_eq!((q.method.as_str(), q.path.as_str()), ("GET", "/a?b=c"));
        assert_eq!(q.host.as_deref(), Some("example.net:8080"));
        for cut in 0..r.len() - 4 {
            assert_eq!(
                HttpRequest::parse(&r[..cut]),
                Err(HttpError::Incomplete),
                "{cut}"
            );
        }
        assert_eq!(HttpRequest::parse(b"\x16\x03\x01"), Err(HttpError::NotHttp));
        let s = HttpResponse::parse(b"HTTP/1.0 404 Not Found\r\n").unwrap();
        assert_eq!((s.status, s.minor_version), (404, 0));
        assert_eq!(HttpResponse::parse(b"HTTP/1"), Err(HttpError::Incomplete));
        assert_eq!(HttpResponse::parse(b"SSH-2.0"), Err(HttpError::NotHttp));
    }
}
