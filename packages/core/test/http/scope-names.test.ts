import { scopeNames } from '../../src/adapter';

describe('scopeNames', () => {
  test('a name no other has stays out; alike ones get where they are, then their order', () => {
    const items = [
      { name: 'UsersController', where: 'v1/users' },
      { name: 'ShopController', where: 'shop' },
      { name: 'UsersController', where: 'v2/users' },
      { name: 'e', where: 'a' },
      { name: 'e', where: 'a' },
    ];
    const names = scopeNames(
      items,
      (item) => item.name,
      (item) => item.where,
    );
    expect([...names.values()]).toEqual([
      'UsersController(v1/users)',
      'UsersController(v2/users)',
      'e(a)',
      'e(a)#2',
    ]);
    expect(names.has(items[1] as (typeof items)[number])).toBe(false);
  });
});
