//! holoquic origin: WebTransport over HTTP/3 on quiche (object delivery on reliable streams or as
//! RaptorQ-coded datagrams, docs/protocol.md) and HTTPS over TCP for the web app, manifests,
//! segments, and a listener for operators (metrics). See docs/origin.md for running it.

pub mod access_log;
pub mod admin;
pub mod bucket;
pub mod bucket_client;
pub mod cert_dir;
pub mod config;
pub mod content;
pub mod content_metrics;
pub mod filecache;
pub mod heap;
pub mod histogram;
pub mod https;
pub mod listener;
pub mod metrics;
pub mod ports;
pub mod private_dir;
pub mod publish;
pub mod quic;
pub mod shutdown;
pub mod tls;
pub mod web;
pub mod webfiles;
