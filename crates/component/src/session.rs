//! The exported `session` resource: one core [`Session`] held in the instance between
//! calls. Each method converts its arguments, calls the core and converts the result
//! (typed ones through `records.rs`); no session logic lives here.

use std::cell::RefCell;

use xcsh_session::api::json_array;
use xcsh_session::context::Leaf;
use xcsh_session::session::{CreateOptions, OpenOptions, Persistence, Session};

use crate::exports::xcsh::session::session_api::{
    ApiError, ArtifactSlot, CompactionInput, ForkOutcome, GuestSession, LoadReport, NameSource,
    Session as SessionHandle, SessionHeader, TreeNode, UsageStatistics,
};
use crate::{records, session_err, storage};

type Res<T> = Result<T, ApiError>;

/// The resource's state: the core session (mutated through `&self`, as WIT methods are).
pub struct SessionResource(RefCell<Session>);

impl SessionResource {
    fn read<T>(&self, f: impl FnOnce(&Session) -> T) -> T {
        f(&self.0.borrow())
    }

    fn write<T>(&self, f: impl FnOnce(&mut Session) -> xcsh_session::error::Result<T>) -> Res<T> {
        f(&mut self.0.borrow_mut()).map_err(session_err)
    }

    fn entries_json<'a>(
        session: &Session,
        entries: impl IntoIterator<Item = &'a xcsh_session::Entry>,
    ) -> String {
        json_array(entries.into_iter().map(|e| session.entry_json(e)))
    }
}

impl GuestSession for SessionResource {
    fn open(path: String, agent_dir: String, cwd: String, read_only: bool) -> Res<SessionHandle> {
        let options = OpenOptions {
            persistence: if read_only {
                Persistence::ReadOnly
            } else {
                Persistence::Persistent
            },
            agent_dir,
            cwd,
        };
        let session = Session::open(storage(), &path, &options).map_err(session_err)?;
        Ok(SessionHandle::new(SessionResource(RefCell::new(session))))
    }

    fn create(
        agent_dir: String,
        cwd: String,
        session_dir: Option<String>,
        parent_session: Option<String>,
    ) -> SessionHandle {
        let options = CreateOptions {
            agent_dir,
            cwd,
            session_dir,
            parent_session,
            // The agent directory's (`.../.pi/agent`: pi's); the WIT has no flavour yet.
            flavour: None,
        };
        SessionHandle::new(SessionResource(RefCell::new(Session::create(
            storage(),
            &options,
        ))))
    }

    fn in_memory(cwd: String) -> SessionHandle {
        SessionHandle::new(SessionResource(RefCell::new(Session::in_memory(
            storage(),
            &cwd,
        ))))
    }

    fn id(&self) -> String {
        self.read(|s| s.session_id().to_string())
    }

    fn file(&self) -> Option<String> {
        self.read(|s| s.file().map(str::to_string))
    }

    fn leaf_id(&self) -> Option<String> {
        self.read(|s| s.leaf_id().map(str::to_string))
    }

    fn header(&self) -> SessionHeader {
        self.read(|s| records::header(s.header()))
    }

    fn entry_count(&self) -> u32 {
        self.read(|s| u32::try_from(s.entries().len()).unwrap_or(u32::MAX))
    }

    fn entries(&self, offset: u32, limit: u32) -> String {
        self.read(|s| {
            let page = s
                .entries()
                .iter()
                .skip(offset as usize)
                .take(limit as usize);
            Self::entries_json(s, page)
        })
    }

    fn entry(&self, id: String) -> Res<String> {
        self.read(|s| {
            s.entry(&id)
                .map(|e| s.entry_json(e).into_owned())
                .map_err(session_err)
        })
    }

    fn children(&self, id: String) -> String {
        self.read(|s| Self::entries_json(s, s.children(&id)))
    }

    fn branch_path(&self, from_id: Option<String>) -> Res<String> {
        self.read(|s| {
            s.branch_path(from_id.as_deref())
                .map(|path| Self::entries_json(s, path))
                .map_err(session_err)
        })
    }

    fn tree(&self) -> String {
        self.read(|s| s.tree().to_json(s))
    }

    fn tree_nodes(&self) -> Vec<TreeNode> {
        self.read(|s| {
            s.tree()
                .nodes(s)
                .into_iter()
                .map(records::tree_node)
                .collect()
        })
    }

    fn label(&self, id: String) -> Option<String> {
        self.read(|s| s.label(&id).map(str::to_string))
    }

    fn context(&self, leaf: Option<String>) -> String {
        self.read(|s| match leaf.as_deref() {
            None => s.context().to_json(),
            Some(id) => s.context_at(Leaf::Id(id)).to_json(),
        })
    }

    fn append_entry(&self, entry_json: String) -> Res<String> {
        self.write(|s| s.append_entry_json(&entry_json))
    }

    fn append_message(&self, message_json: String) -> Res<String> {
        self.write(|s| s.append_message(&message_json))
    }

    fn append_label(&self, target_id: String, label: Option<String>) -> Res<String> {
        self.write(|s| s.append_label_change(&target_id, label.as_deref()))
    }

    fn append_model_change(&self, model: String, role: Option<String>) -> Res<String> {
        self.write(|s| s.append_model_change(&model, role.as_deref()))
    }

    fn append_thinking_level_change(&self, level: Option<String>) -> Res<String> {
        self.write(|s| s.append_thinking_level_change(level.as_deref()))
    }

    fn append_custom_entry(&self, custom_type: String, data_json: Option<String>) -> Res<String> {
        self.write(|s| s.append_custom_entry(&custom_type, data_json.as_deref()))
    }

    fn append_compaction(&self, c: CompactionInput) -> Res<String> {
        let input = xcsh_session::session::CompactionInput {
            summary: c.summary,
            short_summary: c.short_summary,
            first_kept_entry_id: c.first_kept_entry_id,
            tokens_before: c.tokens_before,
            details: c.details_json,
            from_extension: c.from_extension,
            preserve_data: c.preserve_data_json,
        };
        self.write(|s| s.append_compaction(&input))
    }

    fn append_custom_message_entry(
        &self,
        custom_type: String,
        content_json: String,
        display: bool,
        details_json: Option<String>,
        attribution: Option<String>,
    ) -> Res<String> {
        self.write(|s| {
            s.append_custom_message_entry(
                &custom_type,
                &content_json,
                display,
                details_json.as_deref(),
                attribution.as_deref(),
            )
        })
    }

    fn append_mode_change(&self, mode: String, data_json: Option<String>) -> Res<String> {
        self.write(|s| s.append_mode_change(&mode, data_json.as_deref()))
    }

    fn append_ttsr_injection(&self, rules: Vec<String>) -> Res<String> {
        self.write(|s| s.append_ttsr_injection(&rules))
    }

    fn append_mcp_tool_selection(&self, names: Vec<String>) -> Res<String> {
        self.write(|s| s.append_mcp_tool_selection(&names))
    }

    fn append_service_tier_change(&self, tier: Option<String>) -> Res<String> {
        self.write(|s| s.append_service_tier_change(tier.as_deref()))
    }

    fn append_context_change(
        &self,
        context_name: String,
        tenant: String,
        namespace: String,
    ) -> Res<String> {
        self.write(|s| s.append_context_change(&context_name, &tenant, &namespace))
    }

    fn replace_entry(&self, entry_json: String) -> Res<()> {
        self.write(|s| s.replace_entry(&entry_json))
    }

    fn usage_statistics(&self) -> UsageStatistics {
        let u = self.read(|s| s.usage_statistics());
        UsageStatistics {
            input: u.input,
            output: u.output,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
            premium_requests: u.premium_requests,
            cost: u.cost,
        }
    }

    fn last_model_change_role(&self) -> Option<String> {
        self.read(|s| s.last_model_change_role().map(str::to_string))
    }

    fn needs_rewrite(&self) -> bool {
        self.read(|s| s.needs_rewrite())
    }

    fn report(&self) -> LoadReport {
        self.read(|s| records::load_report(s.report()))
    }

    fn warnings(&self) -> Vec<String> {
        self.read(|s| s.warnings().to_vec())
    }

    fn to_jsonl(&self) -> Res<String> {
        self.read(|s| s.to_jsonl().map_err(|e| session_err(e.into())))
    }

    fn allocate_artifact_path(&self, tool_type: String) -> Res<Option<ArtifactSlot>> {
        self.write(|s| s.allocate_artifact_path(&tool_type))
            .map(|slot| slot.map(|(id, path)| ArtifactSlot { id, path }))
    }

    fn save_artifact(&self, content: String, tool_type: String) -> Res<String> {
        self.write(|s| s.save_artifact(&content, &tool_type))
    }

    fn artifact_path(&self, id: String) -> Res<Option<String>> {
        self.read(|s| s.artifact_path(&id).map_err(session_err))
    }

    fn set_name(&self, name: String, source: NameSource) -> Res<bool> {
        let source = match source {
            NameSource::Auto => "auto",
            NameSource::User => "user",
        };
        self.write(|s| s.set_session_name(&name, source))
    }

    fn branch(&self, id: String) -> Res<()> {
        self.write(|s| s.branch(&id))
    }

    fn reset_leaf(&self) {
        self.0.borrow_mut().reset_leaf()
    }

    fn branch_with_summary(
        &self,
        from_id: Option<String>,
        summary: String,
        details_json: Option<String>,
        from_extension: Option<bool>,
    ) -> Res<String> {
        self.write(|s| {
            s.branch_with_summary(
                from_id.as_deref(),
                &summary,
                details_json.as_deref(),
                from_extension,
            )
        })
    }

    fn create_branched_session(&self, leaf_id: String) -> Res<Option<String>> {
        self.write(|s| s.create_branched_session(&leaf_id))
    }

    fn fork(&self) -> Res<ForkOutcome> {
        self.write(|s| s.fork()).map(records::fork_outcome)
    }

    fn move_to(&self, agent_dir: String, new_cwd: String) -> Res<String> {
        self.write(|s| s.move_to(&agent_dir, &new_cwd))
    }

    fn rewrite_entries(&self) -> Res<()> {
        self.write(|s| s.rewrite_entries())
    }

    fn ensure_on_disk(&self) -> Res<()> {
        self.write(|s| s.ensure_on_disk())
    }

    fn is_on_disk(&self) -> bool {
        self.read(|s| s.is_on_disk())
    }

    fn flush(&self) -> Res<()> {
        self.write(|s| s.flush())
    }

    fn close(&self) -> Res<()> {
        self.write(|s| s.close())
    }
}
