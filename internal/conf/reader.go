package conf

import "time"

// Reader reads typed values of one configuration for a builder of a
// daemon's Config: a bad value reads as the zero value and its error is
// added to the builder's list, so that every bad key is reported at once.
type Reader struct {
	c    *Conf
	errs *[]error
}

// Reader returns a Reader of c that appends the errors of bad values to
// *errs.
func (c *Conf) Reader(errs *[]error) Reader { return Reader{c: c, errs: errs} }

func (r Reader) note(err error) {
	if err != nil {
		*r.errs = append(*r.errs, err)
	}
}

// Int is Conf.Int with the error collected.
func (r Reader) Int(key string) int64 {
	v, err := r.c.Int(key)
	r.note(err)
	return v
}

// Size is Conf.Size with the error collected.
func (r Reader) Size(key string) int64 {
	v, err := r.c.Size(key)
	r.note(err)
	return v
}

// Duration is Conf.Duration with the error collected.
func (r Reader) Duration(key string) time.Duration {
	v, err := r.c.Duration(key)
	r.note(err)
	return v
}

// Bool is Conf.Bool with the error collected.
func (r Reader) Bool(key string) bool {
	v, err := r.c.Bool(key)
	r.note(err)
	return v
}
