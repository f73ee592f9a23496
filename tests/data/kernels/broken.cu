// Does not compile: for the "compiler's log lines, one clear error, exit 2" test.
extern "C" __global__ void broken(const float* A, const float* B, float* C, int M, int N, int K)
{
    C[0] = undeclared_name;
}
