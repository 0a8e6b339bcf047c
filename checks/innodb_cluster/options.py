"""MySQL option facts the InnoDB Cluster validator needs, by server version.

A data table, kept apart from the rules so that a new MySQL release is a change here only.

Sources: MySQL Shell's `check_server_variables_compatibility` and
`Parallel_applier_options::get_required_values` (mysqlshdk/libs/mysql/
group_replication.cc, modules/adminapi/common/parallel_applier_options.cc), the MySQL
Server Version Reference "Option and Variable Changes for MySQL 8.2/8.4" pages, and
Percona's "8.4 compatibility and removed items" list. Versions are (major, minor, patch).
"""

from __future__ import annotations

from dbgauge.toolkit.db.version import Version

LATEST_PATCH = {(8, 0): (8, 0, 40), (8, 4): (8, 4, 3)}

# Options mysqld no longer knows: name -> (removed in, what to do instead).
REMOVED: dict[str, tuple[Version, str]] = {
    "expire_logs_days": ((8, 2, 0), "use binlog_expire_logs_seconds"),
    "abort_slave_event_count": ((8, 2, 0), "remove it (test-only option)"),
    "disconnect_slave_event_count": ((8, 2, 0), "remove it (test-only option)"),
    "master_info_repository": ((8, 3, 0), "remove it (TABLE is the only repository)"),
    "relay_log_info_repository": ((8, 3, 0), "remove it (TABLE is the only repository)"),
    "transaction_write_set_extraction": ((8, 3, 0), "remove it (XXHASH64 is built in)"),
    "replica_parallel_type": ((8, 3, 0), "remove it (LOGICAL_CLOCK is built in)"),
    "slave_parallel_type": ((8, 3, 0), "remove it (LOGICAL_CLOCK is built in)"),
    "log_bin_use_v1_row_events": ((8, 3, 0), "remove it"),
    "slave_rows_search_algorithms": ((8, 3, 0), "remove it (hash scans are built in)"),
    "group_replication_ip_whitelist": ((8, 3, 0), "use group_replication_ip_allowlist"),
    "binlog_transaction_dependency_tracking": ((8, 4, 0),
                                               "remove it (WRITESET is built in)"),
    "default_authentication_plugin": ((8, 4, 0), "use authentication_policy"),
    "group_replication_recovery_complete_at": ((8, 4, 0), "remove it"),
    "avoid_temporal_upgrade": ((8, 4, 0), "remove it"),
    "have_openssl": ((8, 4, 0), "remove it"),
    "have_ssl": ((8, 4, 0), "remove it"),
    "admin_ssl": ((8, 4, 0), "use admin_tls_version / admin certificates"),
    "ssl": ((8, 4, 0), "use require_secure_transport / tls_version"),
    "character_set_client_handshake": ((8, 4, 0), "remove it"),
    "authentication_fido_rp_id": ((8, 4, 0), "use authentication_webauthn_rp_id"),
    "keyring_encrypted_file_data": ((8, 4, 0), "use the component keyring"),
    "keyring_encrypted_file_password": ((8, 4, 0), "use the component keyring"),
    "old": ((8, 4, 0), "remove it"),
    "new": ((8, 4, 0), "remove it"),
}

# Deprecated but still accepted: name -> (deprecated in, replacement/advice).
DEPRECATED: dict[str, tuple[Version, str]] = {
    "log_slave_updates": ((8, 0, 26), "use log_replica_updates"),
    "slave_preserve_commit_order": ((8, 0, 26), "use replica_preserve_commit_order"),
    "slave_parallel_workers": ((8, 0, 26), "use replica_parallel_workers"),
    "slave_parallel_type": ((8, 0, 26), "use replica_parallel_type"),
    "replica_parallel_type": ((8, 0, 29), "remove it (LOGICAL_CLOCK only from 8.3)"),
    "master_info_repository": ((8, 0, 23), "remove it (TABLE is the default)"),
    "relay_log_info_repository": ((8, 0, 23), "remove it (TABLE is the default)"),
    "transaction_write_set_extraction": ((8, 0, 26), "remove it (XXHASH64 is the default)"),
    "binlog_transaction_dependency_tracking": ((8, 2, 0), "remove it before 8.4"),
    "binlog_format": ((8, 0, 34), "ROW is the default; the option will go away"),
    "expire_logs_days": ((8, 0, 3), "use binlog_expire_logs_seconds"),
    "default_authentication_plugin": ((8, 0, 27), "use authentication_policy"),
    "group_replication_ip_whitelist": ((8, 0, 22), "use group_replication_ip_allowlist"),
    "skip_slave_start": ((8, 0, 26), "use skip_replica_start"),
    "slave_net_timeout": ((8, 0, 26), "use replica_net_timeout"),
    "sync_master_info": ((8, 0, 26), "use sync_source_info"),
    "log_bin_use_v1_row_events": ((8, 0, 18), "remove it"),
    "slave_rows_search_algorithms": ((8, 0, 18), "remove it"),
    "innodb_log_file_size": ((8, 0, 30), "use innodb_redo_log_capacity"),
    "innodb_log_files_in_group": ((8, 0, 30), "use innodb_redo_log_capacity"),
    "group_replication_allow_local_lower_version_join": ((8, 4, 0), "remove it"),
    "ssl": ((8, 0, 26), "use require_secure_transport / tls_version"),
    "admin_ssl": ((8, 0, 26), "use admin_tls_version"),
}

# Pairs of names for the same setting: old (slave/master) -> new, from 8.0.26.
RENAMED = {"log_slave_updates": "log_replica_updates",
           "slave_preserve_commit_order": "replica_preserve_commit_order",
           "slave_parallel_type": "replica_parallel_type",
           "slave_parallel_workers": "replica_parallel_workers",
           "skip_slave_start": "skip_replica_start"}
RENAMED_SINCE: Version = (8, 0, 26)

DISABLED_ENGINES_RECOMMENDED = ("myisam", "blackhole", "federated", "archive", "memory")

# Group Replication system variables (8.0 and 8.4), for did-you-mean on typos.
GR_VARIABLES = frozenset({
    "group_replication_advertise_recovery_endpoints", "group_replication_allow_local_lower_"
    "version_join", "group_replication_auto_increment_increment",
    "group_replication_autorejoin_tries", "group_replication_bootstrap_group",
    "group_replication_clone_threshold", "group_replication_communication_debug_options",
    "group_replication_communication_max_message_size",
    "group_replication_communication_stack", "group_replication_components_stop_timeout",
    "group_replication_compression_threshold", "group_replication_consistency",
    "group_replication_enforce_update_everywhere_checks",
    "group_replication_exit_state_action", "group_replication_flow_control_applier_threshold",
    "group_replication_flow_control_certifier_threshold",
    "group_replication_flow_control_hold_percent",
    "group_replication_flow_control_max_quota", "group_replication_flow_control_member_quota_"
    "percent", "group_replication_flow_control_min_quota",
    "group_replication_flow_control_min_recovery_quota", "group_replication_flow_control_mode",
    "group_replication_flow_control_period", "group_replication_flow_control_release_percent",
    "group_replication_force_members", "group_replication_group_name",
    "group_replication_group_seeds", "group_replication_gtid_assignment_block_size",
    "group_replication_ip_allowlist", "group_replication_ip_whitelist",
    "group_replication_local_address", "group_replication_member_expel_timeout",
    "group_replication_member_weight", "group_replication_message_cache_size",
    "group_replication_paxos_single_leader", "group_replication_poll_spin_loops",
    "group_replication_preemptive_garbage_collection",
    "group_replication_preemptive_garbage_collection_rows_threshold",
    "group_replication_recovery_complete_at", "group_replication_recovery_compression_"
    "algorithms", "group_replication_recovery_get_public_key",
    "group_replication_recovery_public_key_path", "group_replication_recovery_reconnect_"
    "interval", "group_replication_recovery_retry_count", "group_replication_recovery_ssl_ca",
    "group_replication_recovery_ssl_capath", "group_replication_recovery_ssl_cert",
    "group_replication_recovery_ssl_cipher", "group_replication_recovery_ssl_crl",
    "group_replication_recovery_ssl_crlpath", "group_replication_recovery_ssl_key",
    "group_replication_recovery_ssl_verify_server_cert",
    "group_replication_recovery_tls_ciphersuites", "group_replication_recovery_tls_version",
    "group_replication_recovery_use_ssl", "group_replication_recovery_zstd_compression_level",
    "group_replication_single_primary_mode", "group_replication_ssl_mode",
    "group_replication_start_on_boot", "group_replication_tls_source",
    "group_replication_transaction_size_limit", "group_replication_unreachable_majority_"
    "timeout", "group_replication_view_change_uuid",
})

# --group_replication=VALUE: how the plugin loads (the plugin-load option every plugin
# has), not a Group Replication system variable.
PLUGIN_ACTIVATION = ("ON", "OFF", "FORCE", "FORCE_PLUS_PERMANENT")

# Options mysqld parses as booleans: any other value makes it refuse to start.
BOOLEANS = frozenset({
    "log_replica_updates", "log_slave_updates", "replica_preserve_commit_order",
    "slave_preserve_commit_order", "performance_schema", "skip_replica_start",
    "skip_slave_start", "default_table_encryption", "group_replication_start_on_boot",
    "group_replication_single_primary_mode", "group_replication_bootstrap_group",
    "group_replication_enforce_update_everywhere_checks"})
