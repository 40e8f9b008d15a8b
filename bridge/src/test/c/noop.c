/* A no-op program: the baseline for the cost of starting the hook. */
int main(void) { return 0; }
