-- validate innodb-cluster --live (issue 8): every global variable, checked against the
-- same rules as the member's my.cnf.
SHOW GLOBAL VARIABLES
