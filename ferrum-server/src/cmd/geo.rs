//! Geospatial commands over sorted sets, as Redis stores them: a member's
//! score is the 52-bit interleaved geohash of its position. GEOADD, GEOPOS,
//! GEODIST and GEOHASH; the radius and box searches (GEOSEARCH,
//! GEORADIUS...) are not served yet.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::ZSet;

use super::coll::read;
use super::error::{GEO_BAD_PAIR, GEO_UNIT};
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
    let scale = f64::from(1u32 << STEP);
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
    let mut i = 2;
    let (mut nx, mut xx) = (false, false);
    while i < args.len() {
        if is(&args[i], "nx") {
            nx = true;
        } else if is(&args[i], "xx") {
            xx = true;
        } else if !is(&args[i], "ch") {
            break;
        }
        i += 1;
    }
    let triples = &args[i..];
    if triples.is_empty() || triples.len() % 3 != 0 {
        return Err(CmdError::syntax());
    }
    if nx && xx {
        return Err(CmdError::msg(super::error::ZADD_XX_NX));
    }
    let mut zargs: Vec<Bytes> = args[..i].to_vec();
    zargs[0] = Bytes::from_static(b"zadd");
    for t in triples.chunks_exact(3) {
        let (lon, lat) = (float_arg(&t[0])?, float_arg(&t[1])?);
        if !(LON_MIN..=LON_MAX).contains(&lon) || !(LAT_MIN..=LAT_MAX).contains(&lat) {
            return Err(CmdError::msg(format!("{GEO_BAD_PAIR}{lon:.6},{lat:.6}")));
        }
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
