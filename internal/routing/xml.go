package routing

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// readXML walks every node, way and relation of an OSM XML stream (the
// format of the OSM API's export, Overpass and JOSM), token by token:
// a <node> with its <tag>s, a <way> with its <nd ref>s and <tag>s, a
// <relation> with its <member>s and <tag>s, each handed to s when its
// element ends. Other elements (<bounds>, <changeset>, …) are skipped,
// and so are the objects JOSM marks action="delete" and those with
// visible="false". It stops at the first malformed element, naming it
// and its id.
func readXML(r io.Reader, s sink) error {
	d := xml.NewDecoder(r)
	var seen, inRoot bool
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if !seen {
				return errors.New("no <osm> element")
			}
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case inRoot:
				err = readObject(d, t, s)
			case seen:
				err = fmt.Errorf("line %d: <%s> after </osm>", line(d), t.Name.Local)
			case t.Name.Local != "osm":
				err = fmt.Errorf("line %d: root element <%s>, not <osm>", line(d), t.Name.Local)
			default:
				seen, inRoot = true, true
			}
			if err != nil {
				return err
			}
		case xml.EndElement:
			inRoot = false // objects are read through their end: this is </osm>
		}
	}
}

func line(d *xml.Decoder) int {
	l, _ := d.InputPos()
	return l
}

// attr is the value of the attribute named name, and whether it is there.
func attr(e xml.StartElement, name string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// attrInt is the integer attribute name of e (an id or a reference).
func attrInt(e xml.StartElement, name string) (int64, error) {
	v, ok := attr(e, name)
	if !ok {
		return 0, fmt.Errorf("<%s> without %s", e.Name.Local, name)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("<%s> %s %q: %w", e.Name.Local, name, v, err)
	}
	return n, nil
}

// attrCoord is the coordinate attribute name of a node, within ±limit.
func attrCoord(e xml.StartElement, name string, limit float64) (float64, error) {
	v, ok := attr(e, name)
	if !ok {
		return 0, fmt.Errorf("no %s", name)
	}
	c, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", name, v, err)
	}
	if !(math.Abs(c) <= limit) {
		return 0, fmt.Errorf("%s %s out of range", name, v)
	}
	return c, nil
}

// memberType numbers a relation member's type as the sink does: node 0,
// way 1, relation 2, any other 3.
func memberType(typ string) uint8 {
	switch typ {
	case "node":
		return 0
	case "way":
		return 1
	case "relation":
		return 2
	}
	return 3
}

// readObject reads one element inside <osm> through its end, and hands
// it to s when it is a node, a way or a relation, neither deleted nor
// invisible.
func readObject(d *xml.Decoder, e xml.StartElement, s sink) error {
	kind := e.Name.Local
	at := line(d)
	if kind != "node" && kind != "way" && kind != "relation" {
		if err := d.Skip(); err != nil {
			return fmt.Errorf("line %d: <%s>: %w", at, kind, err)
		}
		return nil
	}
	id, err := attrInt(e, "id")
	if err != nil {
		return fmt.Errorf("line %d: %w", at, err)
	}
	fail := func(err error) error { return fmt.Errorf("line %d: %s %d: %w", at, kind, id, err) }
	action, _ := attr(e, "action")
	visible, _ := attr(e, "visible")
	if action == "delete" || visible == "false" {
		if err := d.Skip(); err != nil {
			return fail(err)
		}
		return nil
	}
	var lat, lon float64
	if kind == "node" {
		if lat, err = attrCoord(e, "lat", 90); err != nil {
			return fail(err)
		}
		if lon, err = attrCoord(e, "lon", 180); err != nil {
			return fail(err)
		}
	}
	var refs []int64
	var members []member
	var tags map[string]string
	for {
		tok, err := d.Token()
		if err != nil {
			return fail(err) // an end of input here is a syntax error
		}
		if _, ok := tok.(xml.EndElement); ok {
			break
		}
		c, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case c.Name.Local == "tag":
			k, ok := attr(c, "k")
			if !ok {
				return fail(errors.New("<tag> without k"))
			}
			if tags == nil {
				tags = map[string]string{}
			}
			tags[k], _ = attr(c, "v")
		case c.Name.Local == "nd" && kind == "way":
			ref, err := attrInt(c, "ref")
			if err != nil {
				return fail(err)
			}
			refs = append(refs, ref)
		case c.Name.Local == "member" && kind == "relation":
			ref, err := attrInt(c, "ref")
			if err != nil {
				return fail(err)
			}
			typ, _ := attr(c, "type")
			role, _ := attr(c, "role")
			members = append(members, member{typ: memberType(typ), id: ref, role: role})
		}
		if err := d.Skip(); err != nil {
			return fail(err)
		}
	}
	switch kind {
	case "node":
		if s.node != nil {
			s.node(id, lat, lon)
		}
		if s.nodeTags != nil && len(tags) > 0 {
			s.nodeTags(id, tags)
		}
	case "way":
		if s.way != nil {
			s.way(id, refs, orEmpty(tags))
		}
	case "relation":
		if s.relation != nil {
			s.relation(id, members, orEmpty(tags))
		}
	}
	return nil
}

// orEmpty is tags, or an empty map, as the PBF reader hands on.
func orEmpty(tags map[string]string) map[string]string {
	if tags == nil {
		return map[string]string{}
	}
	return tags
}
