-- Collector mysql_accounts (MySQL 8.0/8.4, MariaDB 10.4+, where mysql.user is a view): each
-- account's resource limits (0: none) and its global privileges (Y/N), as mysqld_exporter's
-- mysql.user scraper reads them. Needs SELECT on mysql.user. Parameter: the limit plus one.
SELECT User AS account_user, Host AS account_host,
       Select_priv AS select_priv,
       Insert_priv AS insert_priv,
       Update_priv AS update_priv,
       Delete_priv AS delete_priv,
       Create_priv AS create_priv,
       Drop_priv AS drop_priv,
       Reload_priv AS reload_priv,
       Shutdown_priv AS shutdown_priv,
       Process_priv AS process_priv,
       File_priv AS file_priv,
       Grant_priv AS grant_priv,
       References_priv AS references_priv,
       Index_priv AS index_priv,
       Alter_priv AS alter_priv,
       Show_db_priv AS show_db_priv,
       Super_priv AS super_priv,
       Create_tmp_table_priv AS create_tmp_table_priv,
       Lock_tables_priv AS lock_tables_priv,
       Execute_priv AS execute_priv,
       Repl_slave_priv AS repl_slave_priv,
       Repl_client_priv AS repl_client_priv,
       Create_view_priv AS create_view_priv,
       Show_view_priv AS show_view_priv,
       Create_routine_priv AS create_routine_priv,
       Alter_routine_priv AS alter_routine_priv,
       Create_user_priv AS create_user_priv,
       Event_priv AS event_priv,
       Trigger_priv AS trigger_priv,
       Create_tablespace_priv AS create_tablespace_priv,
       max_questions AS max_questions, max_updates AS max_updates,
       max_connections AS max_connections, max_user_connections AS max_user_connections
  FROM mysql.user
 ORDER BY User, Host
 LIMIT %s
