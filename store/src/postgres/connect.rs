//! Connecting to a [`Target`]: TLS over rustls as its `sslmode` asks, and errors that name
//! the store as shown (never its password).

use std::sync::Arc;
use std::time::Duration;

use postgres::Client;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::target::{SslMode, Target};

/// Opens a connection to the database.
pub fn connect(target: &Target) -> Result<Client, String> {
    connect_or_why(target).map_err(|(why, _)| why)
}

/// [`connect`], saying also whether trying again cannot help: the server refused these
/// credentials, this database or these parameters (as opposed to being unreachable or
/// starting up).
pub(crate) fn connect_or_why(target: &Target) -> Result<Client, (String, bool)> {
    if let Some(why) = target.why_unusable() {
        return Err((why.to_string(), true));
    }
    let mut config = postgres::Config::new();
    config
        .host(&target.host)
        .port(target.port)
        .user(&target.user)
        .dbname(&target.dbname)
        .application_name(&target.application_name)
        .connect_timeout(target.connect_timeout)
        // A peer that vanished is noticed within a minute rather than never.
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(15))
        .tcp_user_timeout(Duration::from_secs(30));
    if let Some(password) = &target.password {
        config.password(password);
    }
    let mode = if target.is_socket() { SslMode::Disable } else { target.sslmode };
    let result = match mode {
        SslMode::Disable => config.ssl_mode(postgres::config::SslMode::Disable).connect(postgres::NoTls),
        mode => {
            let tls = tls_config(target, mode).map_err(|why| (why, true))?;
            let ssl_mode = if mode == SslMode::Prefer {
                postgres::config::SslMode::Prefer
            } else {
                postgres::config::SslMode::Require
            };
            config.ssl_mode(ssl_mode).connect(MakeRustlsConnect::new(tls))
        }
    };
    result.map_err(|e| {
        // Class 28: authorization; 3D: no such database; 42: a role or parameter refused.
        let lasting = e.code().is_some_and(|c| ["28", "3D", "42"].iter().any(|class| c.code().starts_with(class)));
        (format!("cannot connect to the event store `{}`: {}", target.display(), describe(&e)), lasting)
    })
}

/// A database error as a person reads it: the server's message with its detail and hint,
/// or the client's error and what caused it.
pub fn describe(error: &postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        let mut text = format!("{}: {}", db.severity(), db.message());
        if let Some(detail) = db.detail() {
            text.push_str(&format!(" ({detail})"));
        }
        if let Some(hint) = db.hint() {
            text.push_str(&format!("; hint: {hint}"));
        }
        return text;
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(&format!(": {said}"));
        }
        source = cause.source();
    }
    text
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn tls_config(target: &Target, mode: SslMode) -> Result<ClientConfig, String> {
    let provider = provider();
    let cannot = |why: String| format!("cannot set up TLS for the event store `{}`: {why}", target.display());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| cannot(e.to_string()))?;
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        // libpq's `prefer` and `require` encrypt without checking who answers.
        SslMode::Disable | SslMode::Prefer | SslMode::Require => Arc::new(AnyCertificate(provider)),
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let roots = Arc::new(roots(target).map_err(cannot)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| cannot(e.to_string()))?;
            if mode == SslMode::VerifyCa { Arc::new(AnyName(webpki)) } else { webpki }
        }
    };
    Ok(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth())
}

/// The roots `verify-*` trusts: the `sslrootcert` file, or the system's.
fn roots(target: &Target) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match &target.sslrootcert {
        Some(path) => {
            let certificates = CertificateDer::pem_file_iter(path)
                .and_then(|items| items.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("cannot read the root certificates `{}` (sslrootcert): {e}", path.display()))?;
            let (added, _) = store.add_parsable_certificates(certificates);
            if added == 0 {
                return Err(format!("`{}` (sslrootcert) holds no certificate", path.display()));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err("the system has no root certificates; name a file with `sslrootcert`".to_string());
            }
        }
    }
    Ok(store)
}

/// Accepts any certificate (the handshake's signatures are still checked).
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; the name in it is not checked.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
