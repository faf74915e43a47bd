module admitd.invalid/go-webhook

go 1.19
