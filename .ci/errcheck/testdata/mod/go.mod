module example.com/mod

go 1.26.0
