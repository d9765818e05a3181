/* Keeps the test support library non-empty. */
typedef int rbf_test_support_empty;
