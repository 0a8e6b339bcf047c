-- Sandbox: end the base backup begun in this session (not waiting for the archiver,
-- which a test may have made fail); its label file goes into the copy.
SELECT labelfile, spcmapfile FROM pg_backup_stop(false);
