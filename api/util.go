package api

import "errors"

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }
