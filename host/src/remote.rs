//! The remote of `sync`: an `object_store` store (S3 and compatible stores, or a local
//! folder) as the core's object-store port. Every call runs to its end on a
//! current-thread tokio runtime; the store's own retries are kept short, so an endpoint
//! that does not answer is one clear error after seconds, not minutes.

use std::time::Duration;

use futures::TryStreamExt;
use object_store::aws::{AmazonS3Builder, S3ConditionalPut};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::ObjectStoreExt as _;
use object_store::{
    ClientOptions, GetOptions, GetRange, ObjectStore as _, PutMode, PutOptions, PutPayload,
    RetryConfig,
};
use xcsh_session::sync::{ObjectError, ObjectMeta, ObjectStore, Put};

/// A remote named by a URL: `s3://BUCKET/PREFIX` or `file:///DIR`.
pub struct Remote {
    store: Box<dyn object_store::ObjectStore>,
    runtime: tokio::runtime::Runtime,
    /// What to call it in errors (`s3://bucket`).
    name: String,
    /// What it is, for keeping apart what was synced with each remote: the URL, with the
    /// endpoint of an `s3://` one (one bucket name on two stores is two remotes).
    id: String,
}

/// The remote of `url`, and the key prefix the URL names. `endpoint` (or
/// `AWS_ENDPOINT_URL`) points an `s3://` remote at a store other than AWS; credentials and
/// region come from the standard `AWS_*` variables.
pub fn open(url: &str, endpoint: Option<&str>) -> anyhow::Result<(Remote, String)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if let Some(rest) = url.strip_prefix("s3://") {
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        anyhow::ensure!(!bucket.is_empty(), "{url}: no bucket (s3://BUCKET/PREFIX)");
        let mut b = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            // Put-if-absent by `If-None-Match: *` (S3's conditional writes).
            .with_conditional_put(S3ConditionalPut::ETagMatch)
            .with_retry(RetryConfig {
                max_retries: 2,
                retry_timeout: Duration::from_secs(15),
                ..Default::default()
            })
            .with_client_options(
                ClientOptions::new()
                    .with_connect_timeout(Duration::from_secs(5))
                    .with_timeout(Duration::from_secs(120)),
            );
        let endpoint = endpoint.map(str::to_string).or_else(|| {
            std::env::var("AWS_ENDPOINT_URL")
                .ok()
                .filter(|e| !e.is_empty())
        });
        if let Some(e) = &endpoint {
            // A store other than AWS has no instance metadata to ask for credentials.
            let has_key = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
            anyhow::ensure!(
                has_key("AWS_ACCESS_KEY_ID") && has_key("AWS_SECRET_ACCESS_KEY"),
                "{url}: no credentials for {e}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            );
            b = b.with_endpoint(e).with_allow_http(e.starts_with("http://"));
        }
        if std::env::var_os("AWS_REGION").is_none()
            && std::env::var_os("AWS_DEFAULT_REGION").is_none()
        {
            b = b.with_region("us-east-1");
        }
        let store = b.build().map_err(|e| anyhow::anyhow!("{url}: {e}"))?;
        let name = format!("s3://{bucket}");
        let id = match endpoint {
            Some(e) => format!("{url} at {e}"),
            None => url.to_string(),
        };
        return Ok((
            Remote {
                store: Box::new(store),
                runtime,
                name,
                id,
            },
            prefix.trim_matches('/').to_string(),
        ));
    }
    if let Some(dir) = url.strip_prefix("file://") {
        let store = LocalFileSystem::new_with_prefix(dir).map_err(|e| {
            anyhow::anyhow!("{url}: the folder cannot be used ({e}); create it first")
        })?;
        return Ok((
            Remote {
                store: Box::new(store),
                runtime,
                name: url.to_string(),
                id: url.to_string(),
            },
            String::new(),
        ));
    }
    anyhow::bail!("{url}: not a remote this command knows (s3://BUCKET/PREFIX or file:///DIR)")
}

impl Remote {
    /// What this remote is (see the field): the name its sync records go under.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// An error of the store, said once and plainly.
    fn error(&self, e: object_store::Error) -> ObjectError {
        let text = format!("{e}");
        let lower = text.to_ascii_lowercase();
        let with = |what: &str| format!("{}: {what} ({text})", self.name);
        if lower.contains("nosuchbucket")
            || lower.contains("bucket not found")
            || lower.contains("bucket does not exist")
        {
            ObjectError::NoBucket(with("no such bucket"))
        } else if lower.contains("invalidaccesskeyid")
            || lower.contains("signaturedoesnotmatch")
            || lower.contains("accessdenied")
            || lower.contains("forbidden")
            || lower.contains("403")
        {
            ObjectError::Denied(with("the credentials were refused"))
        } else if lower.contains("error sending request")
            || lower.contains("connect")
            || lower.contains("timed out")
            || lower.contains("dns")
        {
            ObjectError::Unreachable(with("no answer"))
        } else {
            ObjectError::Other(with("the store failed"))
        }
    }
}

impl ObjectStore for Remote {
    /// A look first, then a put that asks the store to refuse an existing key
    /// (`If-None-Match: *`). Some stores ignore the ask (Garage 2.5): the look is what
    /// keeps an object from being replaced there; the core runs one sync per agent
    /// directory at a time, so nothing else writes this machine's keys in between.
    fn put_if_absent(&self, key: &str, data: &[u8]) -> Result<Put, ObjectError> {
        let path = ObjectPath::from(key);
        match self.runtime.block_on(self.store.head(&path)) {
            Ok(_) => return Ok(Put::Exists),
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(self.error(e)),
        }
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        let payload = PutPayload::from(data.to_vec());
        match self
            .runtime
            .block_on(self.store.put_opts(&path, payload, opts))
        {
            Ok(_) => Ok(Put::Created),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => Ok(Put::Exists),
            Err(e) => Err(self.error(e)),
        }
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError> {
        self.get_with(key, GetOptions::default())
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, ObjectError> {
        if len == 0 {
            return Ok(Some(vec![]));
        }
        self.get_with(
            key,
            GetOptions {
                range: Some(GetRange::Bounded(offset..offset + len)),
                ..Default::default()
            },
        )
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, ObjectError> {
        let p = ObjectPath::from(prefix.trim_end_matches('/'));
        let listed: Result<Vec<_>, _> = self
            .runtime
            .block_on(self.store.list(Some(&p)).try_collect());
        let mut out: Vec<ObjectMeta> = listed
            .map_err(|e| self.error(e))?
            .into_iter()
            .map(|m| ObjectMeta {
                key: m.location.to_string(),
                size: m.size,
            })
            .filter(|m| m.key.starts_with(prefix))
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }
}

impl Remote {
    fn get_with(&self, key: &str, opts: GetOptions) -> Result<Option<Vec<u8>>, ObjectError> {
        let path = ObjectPath::from(key);
        let got = self.runtime.block_on(async {
            let r = self.store.get_opts(&path, opts).await?;
            r.bytes().await
        });
        match got {
            Ok(b) => Ok(Some(b.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(e)),
        }
    }
}
