module admitd/tests/interop/goclient

go 1.19
