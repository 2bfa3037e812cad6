//! Geospatial commands over sorted sets, as Redis stores them: a member's
//! score is the 52-bit interleaved geohash of its position. GEOADD, GEOPOS,
//! GEODIST, GEOHASH, and the searches GEOSEARCH, GEOSEARCHSTORE,
//! GEORADIUS, GEORADIUSBYMEMBER and their `_RO` forms.
//!
//! A search works as Redis's does, so the same members come back in the
//! same order: it picks a geohash precision from the radius (or the box's
//! half-diagonal), takes the cell holding the centre and its eight
//! neighbours (dropping those the bounding box cannot reach), walks each
//! cell's score range in the sorted set in the order centre, N, S, E, W,
//! NE, NW, SE, SW, and keeps the members inside the circle or box.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::ZSet;

use super::args::Args;
use super::coll::{read, read_in, store_in};
use super::error::{
    geo_bad_pair, geo_exactly_one, geo_need_numeric, geo_store_with, COUNT_ABOVE_ZERO,
    GEO_ANY_NEEDS_COUNT, GEO_BOX_NEGATIVE, GEO_MEMBER_DECODE, GEO_RADIUS_NEGATIVE, GEO_UNIT,
};
use super::parse::{float_arg, is};
use super::{zset, CmdError, CmdResult, Ctx};

const LAT_MIN: f64 = -85.051_128_78;
const LAT_MAX: f64 = 85.051_128_78;
const LON_MIN: f64 = -180.0;
const LON_MAX: f64 = 180.0;
/// Bits per coordinate (Redis's `GEO_STEP_MAX`).
const STEP: u32 = 26;
/// Redis's `EARTH_RADIUS_IN_METERS`.
const EARTH_RADIUS_M: f64 = 6_372_797.560_856;

/// Spreads the low 32 bits of `v` to the even bit positions.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// The even bit positions of `v`, packed.
fn squash(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    ((x | (x >> 16)) & 0x0000_0000_FFFF_FFFF) as u32
}

/// Redis's `geohashEncode`: latitude bits at even positions, longitude
/// at odd ones, over the given ranges.
fn encode(lon: f64, lat: f64, lat_range: (f64, f64)) -> u64 {
    encode_step(lon, lat, lat_range, STEP)
}

/// [`encode`] at `step` bits per coordinate.
fn encode_step(lon: f64, lat: f64, lat_range: (f64, f64), step: u32) -> u64 {
    let scale = (1u64 << step) as f64;
    let lat_off = ((lat - lat_range.0) / (lat_range.1 - lat_range.0) * scale) as u32;
    let lon_off = ((lon - LON_MIN) / (LON_MAX - LON_MIN) * scale) as u32;
    spread(lat_off) | (spread(lon_off) << 1)
}

/// Redis's `geohashDecodeToLongLatWGS84`: the centre of the hash's cell.
fn decode(bits: u64) -> (f64, f64) {
    let scale = f64::from(1u32 << STEP);
    let (ilat, ilon) = (f64::from(squash(bits)), f64::from(squash(bits >> 1)));
    let lat_min = LAT_MIN + ilat / scale * (LAT_MAX - LAT_MIN);
    let lat_max = LAT_MIN + (ilat + 1.0) / scale * (LAT_MAX - LAT_MIN);
    let lon_min = LON_MIN + ilon / scale * (LON_MAX - LON_MIN);
    let lon_max = LON_MIN + (ilon + 1.0) / scale * (LON_MAX - LON_MIN);
    let lon = ((lon_min + lon_max) / 2.0).clamp(LON_MIN, LON_MAX);
    let lat = ((lat_min + lat_max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// Redis's `geohashGetDistance` (haversine on its Earth radius).
fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let (lat1r, lon1r) = (lat1.to_radians(), lon1.to_radians());
    let (lat2r, lon2r) = (lat2.to_radians(), lon2.to_radians());
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return EARTH_RADIUS_M * (lat2r - lat1r).abs();
    }
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// A coordinate as Redis prints it (`%.17Lf`, trailing zeros removed).
fn coord(v: f64) -> Frame {
    let s = format!("{v:.17}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    Frame::bulk(s.to_owned())
}

/// Meters per unit of a unit argument.
fn unit_factor(arg: &[u8]) -> Result<f64, CmdError> {
    match () {
        _ if is(arg, "m") => Ok(1.0),
        _ if is(arg, "km") => Ok(1000.0),
        _ if is(arg, "ft") => Ok(0.3048),
        _ if is(arg, "mi") => Ok(1609.34),
        _ => Err(CmdError::msg(GEO_UNIT)),
    }
}

/// `GEOADD key [NX | XX] [CH] longitude latitude member [...]`: a `ZADD`
/// of each member at its geohash, as Redis rewrites it.
pub(crate) fn geoadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut opts = Args::at(args, 2);
    let (mut nx, mut xx) = (false, false);
    loop {
        if opts.flag("nx") {
            nx = true;
        } else if opts.flag("xx") {
            xx = true;
        } else if !opts.flag("ch") {
            break;
        }
    }
    let triples = opts.rest();
    if triples.is_empty() || triples.len() % 3 != 0 {
        return Err(CmdError::syntax());
    }
    if nx && xx {
        // Unlike ZADD, Redis's GEOADD calls this a syntax error.
        return Err(CmdError::syntax());
    }
    let mut zargs: Vec<Bytes> = args[..args.len() - triples.len()].to_vec();
    zargs[0] = Bytes::from_static(b"zadd");
    for t in triples.chunks_exact(3) {
        let (lon, lat) = lon_lat(&t[..2])?;
        let score = encode(lon, lat, (LAT_MIN, LAT_MAX));
        zargs.push(Bytes::from(score.to_string()));
        zargs.push(t[2].clone());
    }
    zset::zadd(ctx, &zargs)
}

/// The scores of `members` in the sorted set at `key` (`None` per absent
/// member, all `None` for an absent key).
fn scores(ctx: &Ctx<'_>, key: &[u8], members: &[Bytes]) -> Result<Vec<Option<f64>>, CmdError> {
    let found = read(ctx, key, |z: &ZSet| {
        members.iter().map(|m| z.score(m)).collect::<Vec<_>>()
    })?;
    Ok(found.unwrap_or_else(|| vec![None; members.len()]))
}

/// `GEOPOS key [member ...]`
pub(crate) fn geopos(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let out = scores(ctx, &args[1], &args[2..])?
        .into_iter()
        .map(|s| match s {
            Some(score) => {
                let (lon, lat) = decode(score as u64);
                Frame::Array(vec![coord(lon), coord(lat)])
            }
            None => Frame::NullArray,
        })
        .collect();
    Ok(Frame::Array(out))
}

/// `GEODIST key member1 member2 [M | KM | FT | MI]`
pub(crate) fn geodist(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let factor = match &args[4..] {
        [] => 1.0,
        [u] => unit_factor(u)?,
        _ => return Err(CmdError::syntax()),
    };
    let s = scores(ctx, &args[1], &args[2..4])?;
    let (Some(a), Some(b)) = (s[0], s[1]) else {
        return Ok(Frame::Null);
    };
    let ((lon1, lat1), (lon2, lat2)) = (decode(a as u64), decode(b as u64));
    let d = distance(lon1, lat1, lon2, lat2) / factor;
    Ok(Frame::bulk(format!("{d:.4}")))
}

/// `GEOHASH key [member ...]`: standard 11-character geohashes (over
/// latitudes -90..90, not the stored -85..85 range).
pub(crate) fn geohash(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let out = scores(ctx, &args[1], &args[2..])?
        .into_iter()
        .map(|s| match s {
            Some(score) => {
                let (lon, lat) = decode(score as u64);
                let bits = encode(lon, lat, (-90.0, 90.0));
                let text: String = (0..11)
                    .map(|i| {
                        let idx = if i == 10 {
                            0
                        } else {
                            (bits >> (52 - (i + 1) * 5)) & 0x1f
                        };
                        ALPHABET[idx as usize] as char
                    })
                    .collect();
                Frame::bulk(text)
            }
            None => Frame::Null,
        })
        .collect();
    Ok(Frame::Array(out))
}

/// Redis's `MERCATOR_MAX`, the radius past which the precision stops
/// growing coarser.
const MERCATOR_MAX: f64 = 20_037_726.37;

fn deg_to_rad(d: f64) -> f64 {
    d * (std::f64::consts::PI / 180.0)
}

fn rad_to_deg(r: f64) -> f64 {
    r / (std::f64::consts::PI / 180.0)
}

/// A geohash cell: its bits and bits per coordinate; `step == 0` is
/// Redis's "no cell" (a neighbour dropped as unreachable).
#[derive(Clone, Copy, PartialEq)]
struct Cell {
    bits: u64,
    step: u32,
}

impl Cell {
    const NONE: Cell = Cell { bits: 0, step: 0 };

    fn is_none(self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// `(lat_min, lat_max, lon_min, lon_max)` of the cell.
    fn area(self) -> (f64, f64, f64, f64) {
        let scale = (1u64 << self.step) as f64;
        let (ilat, ilon) = (
            f64::from(squash(self.bits)),
            f64::from(squash(self.bits >> 1)),
        );
        (
            LAT_MIN + ilat / scale * (LAT_MAX - LAT_MIN),
            LAT_MIN + (ilat + 1.0) / scale * (LAT_MAX - LAT_MIN),
            LON_MIN + ilon / scale * (LON_MAX - LON_MIN),
            LON_MIN + (ilon + 1.0) / scale * (LON_MAX - LON_MIN),
        )
    }

    /// The neighbouring cell `dx` columns east and `dy` rows north
    /// (wrapping around, as Redis's `geohash_move_x/y`).
    fn moved(self, dx: i8, dy: i8) -> Cell {
        let shift = 64 - self.step * 2;
        let mut x = self.bits & 0xaaaa_aaaa_aaaa_aaaa;
        let mut y = self.bits & 0x5555_5555_5555_5555;
        if dx != 0 {
            let zz = 0x5555_5555_5555_5555u64 >> shift;
            x = if dx > 0 {
                x.wrapping_add(zz + 1)
            } else {
                (x | zz).wrapping_sub(zz + 1)
            };
            x &= 0xaaaa_aaaa_aaaa_aaaa >> shift;
        }
        if dy != 0 {
            let zz = 0xaaaa_aaaa_aaaa_aaaau64 >> shift;
            y = if dy > 0 {
                y.wrapping_add(zz + 1)
            } else {
                (y | zz).wrapping_sub(zz + 1)
            };
            y &= 0x5555_5555_5555_5555 >> shift;
        }
        Cell {
            bits: x | y,
            step: self.step,
        }
    }

    /// The cell's score range `[min, max)` in the 52-bit scores.
    fn scores(self) -> (f64, f64) {
        let shift = 52 - self.step * 2;
        (
            (self.bits << shift) as f64,
            ((self.bits + 1) << shift) as f64,
        )
    }
}

#[derive(Clone, Copy)]
enum Area {
    Radius(f64),
    Box { width: f64, height: f64 },
}

/// What a search looks for: centre, shape (in the unit given) and the
/// unit's size in meters.
#[derive(Clone, Copy)]
struct Shape {
    lon: f64,
    lat: f64,
    area: Area,
    conv: f64,
}

impl Shape {
    /// Redis's `geohashBoundingBox`: `(min_lon, min_lat, max_lon, max_lat)`.
    fn bounds(&self) -> (f64, f64, f64, f64) {
        let (h, w) = match self.area {
            Area::Radius(r) => (r * self.conv, r * self.conv),
            Area::Box { width, height } => (self.conv * height / 2.0, self.conv * width / 2.0),
        };
        let lat_delta = rad_to_deg(h / EARTH_RADIUS_M);
        let top = rad_to_deg(w / EARTH_RADIUS_M / deg_to_rad(self.lat + lat_delta).cos());
        let bottom = rad_to_deg(w / EARTH_RADIUS_M / deg_to_rad(self.lat - lat_delta).cos());
        let d = if self.lat < 0.0 { bottom } else { top };
        (
            self.lon - d,
            self.lat - lat_delta,
            self.lon + d,
            self.lat + lat_delta,
        )
    }

    /// The distance from the centre in meters when `(lon, lat)` is inside.
    fn contains(&self, lon: f64, lat: f64) -> Option<f64> {
        match self.area {
            Area::Radius(r) => {
                let d = distance(self.lon, self.lat, lon, lat);
                (d <= r * self.conv).then_some(d)
            }
            Area::Box { width, height } => {
                let lat_d = EARTH_RADIUS_M * (deg_to_rad(self.lat) - deg_to_rad(lat)).abs();
                if lat_d > height * self.conv / 2.0 {
                    return None;
                }
                if distance(lon, lat, self.lon, lat) > width * self.conv / 2.0 {
                    return None;
                }
                Some(distance(self.lon, self.lat, lon, lat))
            }
        }
    }

    /// Redis's `geohashCalculateAreasByShapeWGS84`: the centre cell and
    /// its neighbours N, S, E, W, NE, NW, SE, SW, unreachable ones NONE.
    fn cells(&self) -> [Cell; 9] {
        let (min_lon, min_lat, max_lon, max_lat) = self.bounds();
        let radius = match self.area {
            Area::Radius(r) => r,
            Area::Box { width, height } => ((width / 2.0).powi(2) + (height / 2.0).powi(2)).sqrt(),
        } * self.conv;
        let mut step = estimate_step(radius, self.lat);
        let at = |step: u32| {
            let c = Cell {
                bits: encode_step(self.lon, self.lat, (LAT_MIN, LAT_MAX), step),
                step,
            };
            [
                c,
                c.moved(0, 1),
                c.moved(0, -1),
                c.moved(1, 0),
                c.moved(-1, 0),
                c.moved(1, 1),
                c.moved(-1, 1),
                c.moved(1, -1),
                c.moved(-1, -1),
            ]
        };
        let mut n = at(step);
        let too_small = n[1].area().1 < max_lat
            || n[2].area().0 > min_lat
            || n[3].area().3 < max_lon
            || n[4].area().2 > min_lon;
        if step > 1 && too_small {
            step -= 1;
            n = at(step);
        }
        if step >= 2 {
            let (a_lat_min, a_lat_max, a_lon_min, a_lon_max) = n[0].area();
            let mut drop = |idx: [usize; 3]| idx.iter().for_each(|&i| n[i] = Cell::NONE);
            if a_lat_min < min_lat {
                drop([2, 8, 7]);
            }
            if a_lat_max > max_lat {
                drop([1, 5, 6]);
            }
            if a_lon_min < min_lon {
                drop([4, 8, 6]);
            }
            if a_lon_max > max_lon {
                drop([3, 7, 5]);
            }
        }
        n
    }
}

/// Redis's `geohashEstimateStepsByRadius`.
fn estimate_step(mut range: f64, lat: f64) -> u32 {
    if range == 0.0 {
        return STEP;
    }
    let mut step: i32 = 1;
    while range < MERCATOR_MAX {
        range *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, STEP as i32) as u32
}

/// One member found by a search.
struct Found {
    member: Bytes,
    dist: f64,
    score: f64,
    lon: f64,
    lat: f64,
}

/// Members of `z` inside `shape`, in Redis's cell-walk order; stops at
/// `limit` (COUNT ... ANY) when non-zero.
fn members_in(z: &ZSet, shape: &Shape, limit: usize) -> Vec<Found> {
    use ferrum_store::types::ScoreBound;
    let cells = shape.cells();
    let mut out = Vec::new();
    let mut last = 0;
    for (i, &cell) in cells.iter().enumerate() {
        if cell.is_none() {
            continue;
        }
        if last != 0 && cell == cells[last] {
            continue;
        }
        if limit != 0 && out.len() >= limit {
            break;
        }
        let (min, max) = cell.scores();
        let lo = ScoreBound {
            value: min,
            exclusive: false,
        };
        let hi = ScoreBound {
            value: max,
            exclusive: true,
        };
        let (from, to) = z.score_ranks(lo, hi);
        for (member, score) in z.range_by_rank(from, to) {
            let (lon, lat) = decode(score as u64);
            if let Some(dist) = shape.contains(lon, lat) {
                out.push(Found {
                    member,
                    dist,
                    score,
                    lon,
                    lat,
                });
            }
            if limit != 0 && out.len() >= limit {
                break;
            }
        }
        last = i;
    }
    out
}

/// Which search command is parsing.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Radius { ro: bool },
    ByMember { ro: bool },
    Search,
    SearchStore,
}

/// A parsed search, ready to run.
struct Query {
    shape: Option<Shape>,
    with_dist: bool,
    with_hash: bool,
    with_coord: bool,
    sort: Option<bool>,
    any: bool,
    count: usize,
    store: Option<Bytes>,
    store_dist: bool,
}

fn need_float(arg: &[u8], what: &str) -> Result<f64, CmdError> {
    super::parse::parse_f64(arg).ok_or_else(|| CmdError::msg(geo_need_numeric(what)))
}

fn lon_lat(args: &[Bytes]) -> Result<(f64, f64), CmdError> {
    let (lon, lat) = (float_arg(&args[0])?, float_arg(&args[1])?);
    if !(LON_MIN..=LON_MAX).contains(&lon) || !(LAT_MIN..=LAT_MAX).contains(&lat) {
        return Err(CmdError::msg(geo_bad_pair(lon, lat)));
    }
    Ok((lon, lat))
}

fn radius_unit(args: &[Bytes]) -> Result<(f64, f64), CmdError> {
    let r = need_float(&args[0], "radius")?;
    if r < 0.0 {
        return Err(CmdError::msg(GEO_RADIUS_NEGATIVE));
    }
    Ok((r, unit_factor(&args[1])?))
}

fn member_pos(z: &ZSet, member: &[u8]) -> Result<(f64, f64), CmdError> {
    z.score(member)
        .map(|s| decode(s as u64))
        .ok_or_else(|| CmdError::msg(GEO_MEMBER_DECODE))
}

/// Parses a search command's arguments the way Redis's
/// `georadiusGeneric` does (same checks, same order, same errors).
fn parse(z: Option<&ZSet>, args: &[Bytes], kind: Kind) -> Result<Query, CmdError> {
    let mut q = Query {
        shape: None,
        with_dist: false,
        with_hash: false,
        with_coord: false,
        sort: None,
        any: false,
        count: 0,
        store: None,
        store_dist: false,
    };
    let (mut center, mut area, mut conv) = (None, None, 1.0);
    let base = match kind {
        Kind::Radius { .. } => {
            center = Some(lon_lat(&args[2..4])?);
            let (r, c) = radius_unit(&args[4..6])?;
            (area, conv) = (Some(Area::Radius(r)), c);
            6
        }
        Kind::ByMember { .. } => {
            if let Some(z) = z {
                center = Some(member_pos(z, &args[2])?);
                let (r, c) = radius_unit(&args[3..5])?;
                (area, conv) = (Some(Area::Radius(r)), c);
            }
            5
        }
        Kind::Search => 2,
        Kind::SearchStore => {
            q.store = Some(args[1].clone());
            3
        }
    };
    let search = matches!(kind, Kind::Search | Kind::SearchStore);
    let nostore = matches!(
        kind,
        Kind::Radius { ro: true } | Kind::ByMember { ro: true }
    );
    let (mut from_member, mut from_loc, mut by_radius, mut by_box) = (false, false, false, false);
    let mut rest = Args::at(args, base);
    while let Some(a) = rest.next() {
        let left = rest.remaining();
        if is(a, "withdist") {
            q.with_dist = true;
        } else if is(a, "withhash") {
            q.with_hash = true;
        } else if is(a, "withcoord") {
            q.with_coord = true;
        } else if is(a, "any") {
            q.any = true;
        } else if is(a, "asc") {
            q.sort = Some(true);
        } else if is(a, "desc") {
            q.sort = Some(false);
        } else if is(a, "count") && left >= 1 {
            let n = rest.int()?;
            if n <= 0 {
                return Err(CmdError::msg(COUNT_ABOVE_ZERO));
            }
            q.count = n as usize;
        } else if (is(a, "store") || is(a, "storedist")) && left >= 1 && !nostore && !search {
            q.store = Some(rest.expect()?.clone());
            q.store_dist = is(a, "storedist");
        } else if is(a, "storedist") && kind == Kind::SearchStore {
            q.store_dist = true;
        } else if is(a, "frommember") && left >= 1 && search && !from_loc {
            let member = rest.expect()?;
            if let Some(z) = z {
                center = Some(member_pos(z, member)?);
            }
            from_member = true;
        } else if is(a, "fromlonlat") && left >= 2 && search && !from_member {
            center = Some(lon_lat(rest.next_n(2)?)?);
            from_loc = true;
        } else if is(a, "byradius") && left >= 2 && search && !by_box {
            let (r, c) = radius_unit(rest.next_n(2)?)?;
            (area, conv) = (Some(Area::Radius(r)), c);
            by_radius = true;
        } else if is(a, "bybox") && left >= 3 && search && !by_radius {
            let [w, h, unit] = rest.take_array()?;
            let width = need_float(w, "width")?;
            let height = need_float(h, "height")?;
            if width < 0.0 || height < 0.0 {
                return Err(CmdError::msg(GEO_BOX_NEGATIVE));
            }
            conv = unit_factor(unit)?;
            area = Some(Area::Box { width, height });
            by_box = true;
        } else {
            return Err(CmdError::syntax());
        }
    }
    if q.store.is_some() && (q.with_dist || q.with_hash || q.with_coord) {
        let what = if kind == Kind::SearchStore {
            "GEOSEARCHSTORE"
        } else {
            "STORE option in GEORADIUS"
        };
        return Err(CmdError::msg(geo_store_with(what)));
    }
    let name = String::from_utf8_lossy(&args[0]);
    if search && !(from_member || from_loc) {
        return Err(CmdError::msg(geo_exactly_one(
            "FROMMEMBER or FROMLONLAT",
            &name,
        )));
    }
    if search && !(by_radius || by_box) {
        return Err(CmdError::msg(geo_exactly_one("BYRADIUS and BYBOX", &name)));
    }
    if q.any && q.count == 0 {
        return Err(CmdError::msg(GEO_ANY_NEEDS_COUNT));
    }
    if q.count != 0 && q.sort.is_none() && !q.any {
        q.sort = Some(true);
    }
    if let (Some((lon, lat)), Some(area)) = (center, area) {
        q.shape = Some(Shape {
            lon,
            lat,
            area,
            conv,
        });
    }
    Ok(q)
}

/// The keys a search may store into, for locking before parsing.
fn store_target(args: &[Bytes], kind: Kind) -> Option<&Bytes> {
    match kind {
        Kind::SearchStore => Some(&args[1]),
        Kind::Radius { ro: false } | Kind::ByMember { ro: false } => args
            .windows(2)
            .rev()
            .find(|w| is(&w[0], "store") || is(&w[0], "storedist"))
            .map(|w| &w[1]),
        _ => None,
    }
}

fn search(ctx: &mut Ctx<'_>, args: &[Bytes], kind: Kind) -> CmdResult {
    let src = if kind == Kind::SearchStore {
        &args[2]
    } else {
        &args[1]
    };
    let (db, now) = (ctx.db(), ctx.now);
    let target = store_target(args, kind);
    let mut ks = ctx
        .store()
        .lock_keys(std::iter::once(&src[..]).chain(target.map(|t| &t[..])));
    let run = |z: Option<&ZSet>| -> Result<(Query, Vec<Found>), CmdError> {
        let q = parse(z, args, kind)?;
        let found = match (z, &q.shape) {
            (Some(z), Some(shape)) => members_in(z, shape, if q.any { q.count } else { 0 }),
            _ => Vec::new(),
        };
        Ok((q, found))
    };
    let (q, mut found) = match read_in(ks.shard(src), db, src, now, |z: &ZSet| run(Some(z)))? {
        Some(r) => r?,
        None => run(None)?,
    };
    let conv = q.shape.map_or(1.0, |s| s.conv);
    match q.sort {
        Some(true) => found.sort_by(|a, b| a.dist.total_cmp(&b.dist)),
        Some(false) => found.sort_by(|a, b| b.dist.total_cmp(&a.dist)),
        None => {}
    }
    if q.count != 0 {
        found.truncate(q.count);
    }
    if let Some(dest) = &q.store {
        let mut out = ZSet::new();
        for f in &found {
            let score = if q.store_dist { f.dist / conv } else { f.score };
            out.insert(&f.member, score);
        }
        let n = out.len();
        store_in(ks.shard(dest), db, dest, now, out);
        drop(ks);
        ctx.dirty = Some(n.max(1) as u64);
        return Ok(Frame::Integer(n as i64));
    }
    drop(ks);
    let extra = usize::from(q.with_dist) + usize::from(q.with_hash) + usize::from(q.with_coord);
    let out = found
        .into_iter()
        .map(|f| {
            let member = Frame::Bulk(f.member);
            if extra == 0 {
                return member;
            }
            let mut row = vec![member];
            if q.with_dist {
                row.push(Frame::bulk(format!("{:.4}", f.dist / conv)));
            }
            if q.with_hash {
                row.push(Frame::Integer(f.score as i64));
            }
            if q.with_coord {
                row.push(Frame::Array(vec![coord(f.lon), coord(f.lat)]));
            }
            Frame::Array(row)
        })
        .collect();
    Ok(Frame::Array(out))
}

/// `GEORADIUS key longitude latitude radius unit [options] [STORE key] [STOREDIST key]`
pub(crate) fn georadius(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search(ctx, args, Kind::Radius { ro: false })
}

/// `GEORADIUS_RO key longitude latitude radius unit [options]`
pub(crate) fn georadius_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search(ctx, args, Kind::Radius { ro: true })
}

/// `GEORADIUSBYMEMBER key member radius unit [options] [STORE key] [STOREDIST key]`
pub(crate) fn georadiusbymember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search(ctx, args, Kind::ByMember { ro: false })
}

/// `GEORADIUSBYMEMBER_RO key member radius unit [options]`
pub(crate) fn georadiusbymember_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search(ctx, args, Kind::ByMember { ro: true })
}

/// `GEOSEARCH key FROMMEMBER m | FROMLONLAT lon lat BYRADIUS r unit | BYBOX w h unit [ASC|DESC] [COUNT n [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]`
pub(crate) fn geosearch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search(ctx, args, Kind::Search)
}

/// `GEOSEARCHSTORE destination source ... [STOREDIST]`
pub(crate) fn geosearchstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search(ctx, args, Kind::SearchStore)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleave_round_trips() {
        for v in [0u32, 1, 0x3ff_ffff, 0x155_5555, 12345] {
            assert_eq!(squash(spread(v)), v);
        }
    }

    #[test]
    fn decode_is_near_the_encoded_point() {
        let (lon, lat) = decode(encode(13.361389, 38.115556, (LAT_MIN, LAT_MAX)));
        assert!((lon - 13.361389).abs() < 1e-5 && (lat - 38.115556).abs() < 1e-5);
    }
}
