-- validate pgbouncer --live (issue 8): running settings to compare with the file.
SHOW CONFIG
